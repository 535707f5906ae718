"""One module per wire format; each turns a prompt and a schema into raw JSON text."""
