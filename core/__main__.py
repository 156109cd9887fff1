import sys

from core.front.cli import main

sys.exit(main())
