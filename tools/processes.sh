# Helpers shared by tools/stack and tools/galera (sourced, not run).

# free_ports N: N distinct TCP ports nothing listens on at 127.0.0.1, one per line. They are
# held open together while chosen, so one call never names a port twice (two calls may).
free_ports() {
  perl -MIO::Socket::INET -e 'my @s = map { IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 1, ReuseAddr => 1) or die "no free port: $!\n" } 1 .. $ARGV[0]; print $_->sockport, "\n" for @s' "$1"
}

free_port() { free_ports 1; }

# running PID: the process exists and is not a zombie waiting for its parent.
running() {
  [ -d "/proc/$1" ] && [ "$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" != Z ]
}
