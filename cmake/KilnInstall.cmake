# (install rules are added with the public API)
