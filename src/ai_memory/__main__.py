from ai_memory.cli.entry import console

console()
