from ai_memory.cli.entry import main

main()
