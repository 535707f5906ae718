"""The SQLite index: schema and migrations, the single writer, the reader pool."""
