// Backgrounder module: see README.md for its role.
