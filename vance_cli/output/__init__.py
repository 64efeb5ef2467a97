"""What the plain terminal shows, for the commands and the demo: the event printers and the process tree."""
