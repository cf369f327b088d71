import Glibc

// The command-line client; its commands arrive with the typed client library.
print("usage: snapback <command>")
exit(2)
