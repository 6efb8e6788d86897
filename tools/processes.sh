# Helpers shared by tools/stack and tools/galera (sourced, not run).

# free_port: a TCP port nothing listens on at 127.0.0.1.
free_port() {
  perl -MIO::Socket::INET -e 'my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 1, ReuseAddr => 1) or die "no free port: $!\n"; print $s->sockport, "\n"'
}

# running PID: the process exists and is not a zombie waiting for its parent.
running() {
  [ -d "/proc/$1" ] && [ "$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" != Z ]
}
