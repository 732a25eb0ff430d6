"""The host's side of a sandbox's folders: which workspace a session gets (`workspaces`), the
hosted folder where the host writes what the sandbox only reads (`hosted`), and reading a
workspace without following what the sandbox planted (`beneath`)."""
