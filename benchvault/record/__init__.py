"""`benchvault record`: run a command, keep what it printed with the facts of its machine
(facts.py), its output copied live (run.py), stored as it runs or when it ends (session.py)."""
