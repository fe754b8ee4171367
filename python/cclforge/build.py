"""The plugin build API: bridge extensions for a plugin's setup.py, from
`cclforge bridge plan --json` (the binary computes the plan; nothing here
computes it twice)."""
