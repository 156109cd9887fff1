"""What you do after finding: export files, token usage and its estimated cost, the
command that resumes a session, and the handoff text another agent reads."""
