"""`python -m harness` is the `harness` command (useful from a checkout or worktree without reinstalling)."""

from harness.cli import main

main()
