// Reachability module: see README.md for its role.
