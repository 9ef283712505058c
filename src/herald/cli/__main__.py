from herald.cli import main

main()
