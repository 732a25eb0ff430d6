"""The host's side of a sandbox's folders: which workspace a session gets (`workspaces`) and
whom the sandbox runs as there (`owner`), the hosted folder where the host writes what the
sandbox only reads (`hosted`), reading a workspace without following what the sandbox planted
(`beneath`), and copying a capped workspace back (`copyback`)."""
