"""Finding pages: query preparation, ranked streams, fusion, authority, explain."""
