"""Export all-MiniLM-L6-v2 to the int8 ONNX file relay-search ships (no torch needed).

Build time only (needs the ``export`` extra: onnx, safetensors). Reads the original
sentence-transformers checkpoint (a directory holding ``model.safetensors``,
``config.json`` and ``tokenizer.json``), writes the BERT encoder plus mean pooling and
L2 normalisation as one ONNX graph with ``onnx.helper``, checks it against a numpy
forward pass of the same weights, quantises the weights to int8 with
``onnxruntime.quantization.quantize_dynamic``, checks the int8 output against fp32
(cosine on sample sentences) and that a paraphrase scores far above an unrelated
pair, and writes the model and tokenizer into ``core/semantic/model/``.

    python scripts/export_minilm.py /path/to/all-MiniLM-L6-v2 [--out core/semantic/model]

Print the sha256 of the written model and put it in ``core/semantic/embedder.py``
(``MODEL_SHA256``): the runtime refuses a model file whose hash differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

MODEL_FILE = "minilm-l6-v2-int8.onnx"
MAX_TOKENS = 128
SAMPLES = [
    "How do I fix the flaky invoice test that fails on CI?",
    "The invoice test is unreliable in continuous integration; how can it be repaired?",
    "Bake a loaf of sourdough bread with a crispy crust.",
    "We migrated the sqlite schema and made the column nullable.",
    "relay-search index --stats prints skipped lines per file",
]


class Graph:
    """A small builder: named nodes and initializers for one ONNX graph."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._n = 0

    def name(self, stem: str) -> str:
        self._n += 1
        return f"{stem}_{self._n}"

    def const(self, stem: str, value: np.ndarray) -> str:
        name = self.name(stem)
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def op(self, kind: str, inputs: list[str], stem: str | None = None, **attrs: object) -> str:
        out = self.name(stem or kind.lower())
        self.nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def linear(self, x: str, weight: np.ndarray, bias: np.ndarray, stem: str) -> str:
        # torch's Linear stores (out, in); MatMul wants (in, out)
        w = self.const(f"{stem}.w", np.ascontiguousarray(weight.T.astype(np.float32)))
        b = self.const(f"{stem}.b", bias.astype(np.float32))
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def layer_norm(self, x: str, gamma: np.ndarray, beta: np.ndarray, eps: float, stem: str) -> str:
        g = self.const(f"{stem}.g", gamma.astype(np.float32))
        b = self.const(f"{stem}.b", beta.astype(np.float32))
        return self.op("LayerNormalization", [x, g, b], axis=-1, epsilon=eps)


def build_graph(weights: dict[str, np.ndarray], config: dict) -> onnx.ModelProto:
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    head_dim = hidden // heads
    eps = float(config["layer_norm_eps"])
    g = Graph()
    ids, mask = "input_ids", "attention_mask"
    word = g.op("Gather", [g.const("word_emb", weights["embeddings.word_embeddings.weight"]), ids], axis=0)
    seq_len = g.op("Gather", [g.op("Shape", [ids]), g.const("one_i", np.array(1, dtype=np.int64))], axis=0)
    positions = g.op(
        "Range", [g.const("zero", np.array(0, dtype=np.int64)), seq_len, g.const("step", np.array(1, dtype=np.int64))]
    )
    pos = g.op("Gather", [g.const("pos_emb", weights["embeddings.position_embeddings.weight"]), positions], axis=0)
    token_type = g.const("type0", weights["embeddings.token_type_embeddings.weight"][0])  # token_type_ids are all 0
    x = g.op("Add", [g.op("Add", [word, pos]), token_type])
    x = g.layer_norm(x, weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"], eps, "emb_ln")
    mask_f = g.op("Cast", [mask], to=TensorProto.FLOAT)
    # (1 - mask) * -10000 as [B, 1, 1, S]: padded keys get no attention
    bias = g.op(
        "Mul",
        [
            g.op("Sub", [g.const("onef", np.array(1.0, np.float32)), mask_f]),
            g.const("neg", np.array(-10000.0, np.float32)),
        ],
    )
    bias = g.op("Unsqueeze", [bias, g.const("ax12", np.array([1, 2], dtype=np.int64))])
    split_heads = g.const("split", np.array([0, 0, heads, head_dim], dtype=np.int64))
    merge_heads = g.const("merge", np.array([0, 0, hidden], dtype=np.int64))
    scale = g.const("scale", np.array(1.0 / math.sqrt(head_dim), dtype=np.float32))
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."

        def proj(name: str, x: str = x, p: str = p, layer: int = layer) -> str:
            w, b = weights[f"{p}attention.self.{name}.weight"], weights[f"{p}attention.self.{name}.bias"]
            return g.linear(x, w, b, f"l{layer}.{name}")

        q = g.op("Transpose", [g.op("Reshape", [proj("query"), split_heads])], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [proj("key"), split_heads])], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [proj("value"), split_heads])], perm=[0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), bias])
        probs = g.op("Softmax", [scores], axis=-1)
        ctx = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3]), merge_heads])
        attn = g.linear(
            ctx,
            weights[f"{p}attention.output.dense.weight"],
            weights[f"{p}attention.output.dense.bias"],
            f"l{layer}.ao",
        )
        x = g.layer_norm(
            g.op("Add", [attn, x]),
            weights[f"{p}attention.output.LayerNorm.weight"],
            weights[f"{p}attention.output.LayerNorm.bias"],
            eps,
            f"l{layer}.ln1",
        )
        inter = g.linear(
            x, weights[f"{p}intermediate.dense.weight"], weights[f"{p}intermediate.dense.bias"], f"l{layer}.in"
        )
        # GELU (erf): 0.5 x (1 + erf(x / sqrt 2))
        erf = g.op("Erf", [g.op("Mul", [inter, g.const("isqrt2", np.array(1 / math.sqrt(2), np.float32))])])
        gelu = g.op(
            "Mul",
            [
                g.op("Mul", [inter, g.const("half", np.array(0.5, np.float32))]),
                g.op("Add", [erf, g.const("onef", np.array(1.0, np.float32))]),
            ],
        )
        out = g.linear(gelu, weights[f"{p}output.dense.weight"], weights[f"{p}output.dense.bias"], f"l{layer}.out")
        x = g.layer_norm(
            g.op("Add", [out, x]),
            weights[f"{p}output.LayerNorm.weight"],
            weights[f"{p}output.LayerNorm.bias"],
            eps,
            f"l{layer}.ln2",
        )
    # mean over the attention mask, then L2-normalise: what sentence-transformers does
    m3 = g.op("Unsqueeze", [mask_f, g.const("ax2", np.array([2], dtype=np.int64))])
    axis1 = g.const("ax1", np.array([1], dtype=np.int64))
    total = g.op("ReduceSum", [g.op("Mul", [x, m3]), axis1], keepdims=0)
    count = g.op("Max", [g.op("ReduceSum", [m3, axis1], keepdims=0), g.const("tiny", np.array(1e-9, np.float32))])
    mean = g.op("Div", [total, count])
    norm = g.op(
        "Max",
        [
            g.op(
                "Sqrt",
                [
                    g.op(
                        "ReduceSum",
                        [g.op("Mul", [mean, mean]), g.const("axl", np.array([-1], dtype=np.int64))],
                        keepdims=1,
                    )
                ],
            ),
            g.const("tiny2", np.array(1e-12, np.float32)),
        ],
    )
    g.nodes.append(helper.make_node("Div", [mean, norm], ["embedding"]))
    graph = helper.make_graph(
        g.nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", hidden])],
        initializer=g.inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="relay-search export_minilm"
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def reference(weights: dict[str, np.ndarray], config: dict, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The same network in plain numpy (float64), to check the graph against."""
    from math import erf

    w = {k: v.astype(np.float64) for k, v in weights.items() if v.dtype != np.int64}
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    d = hidden // heads
    eps = config["layer_norm_eps"]
    verf = np.vectorize(erf)

    def ln(x: np.ndarray, p: str) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * w[p + ".weight"] + w[p + ".bias"]

    def lin(x: np.ndarray, p: str) -> np.ndarray:
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    b, s = ids.shape
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:s]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = ln(x, "embeddings.LayerNorm")
    bias = (1.0 - mask[:, None, None, :]) * -10000.0
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."
        q, k, v = (
            lin(x, f"{p}attention.self.{n}").reshape(b, s, heads, d).transpose(0, 2, 1, 3)
            for n in ("query", "key", "value")
        )
        sc = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + bias
        sc = np.exp(sc - sc.max(-1, keepdims=True))
        pr = sc / sc.sum(-1, keepdims=True)
        ctx = (pr @ v).transpose(0, 2, 1, 3).reshape(b, s, hidden)
        x = ln(lin(ctx, f"{p}attention.output.dense") + x, f"{p}attention.output.LayerNorm")
        h = lin(x, f"{p}intermediate.dense")
        h = 0.5 * h * (1.0 + verf(h / math.sqrt(2)))
        x = ln(lin(h, f"{p}output.dense") + x, f"{p}output.LayerNorm")
    m = mask[:, :, None].astype(np.float64)
    mean = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return mean / np.linalg.norm(mean, axis=-1, keepdims=True)


def encode(tokenizer_path: Path, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_path))
    tok.enable_truncation(max_length=MAX_TOKENS)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    enc = tok.encode_batch(texts)
    return np.array([e.ids for e in enc], dtype=np.int64), np.array([e.attention_mask for e in enc], dtype=np.int64)


def run(model_path: Path, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    return session.run(["embedding"], {"input_ids": ids, "attention_mask": mask})[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "checkpoint", type=Path, help="directory of the sentence-transformers all-MiniLM-L6-v2 checkpoint"
    )
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent.parent / "core" / "semantic" / "model"
    )
    args = parser.parse_args(argv)
    from onnxruntime.quantization import QuantType, quantize_dynamic

    config = json.loads((args.checkpoint / "config.json").read_text())
    weights = load_file(str(args.checkpoint / "model.safetensors"))
    model = build_graph(weights, config)
    ids, mask = encode(args.checkpoint / "tokenizer.json", SAMPLES)
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        onnx.save(model, str(fp32))
        got = run(fp32, ids, mask)
        want = reference(weights, config, ids, mask)
        print(f"fp32 graph vs numpy reference: max abs diff {np.abs(got - want).max():.2e}")
        if np.abs(got - want).max() > 1e-4:
            print("the graph does not match the reference", file=sys.stderr)
            return 1
        int8 = Path(tmp) / MODEL_FILE
        # per-channel scales: per-tensor int8 gave cosines of only ~0.96 against fp32
        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
        q = run(int8, ids, mask)
        cosines = (q * got).sum(-1)
        print("int8 vs fp32 cosine per sample: " + ", ".join(f"{c:.4f}" for c in cosines))
        paraphrase, unrelated = float(q[0] @ q[1]), float(q[0] @ q[2])
        print(f"paraphrase pair {paraphrase:.3f}, unrelated pair {unrelated:.3f}")
        if cosines.min() < 0.99 or paraphrase < unrelated + 0.3:
            print("the int8 model is not close enough to fp32", file=sys.stderr)
            return 1
        args.out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(int8, args.out / MODEL_FILE)
    shutil.copyfile(args.checkpoint / "tokenizer.json", args.out / "tokenizer.json")
    digest = hashlib.sha256((args.out / MODEL_FILE).read_bytes()).hexdigest()
    print(f"wrote {args.out / MODEL_FILE} ({(args.out / MODEL_FILE).stat().st_size:,} bytes), sha256 {digest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
