# Sourced by the scripts/*-cache.sh fetchers: one fetcher at a time per cache
# root. CTest runs the tests two at a time, and on a fresh machine two of them
# fetch the same cache at once: one replaced the torch site directory (rm -rf,
# mv) while the other was compiling against it (cli.bridge_cmake failed in a
# clean-clone CI). The lock is held until the script exits (fd 9 closes); a
# caller that waited re-checks the stamp and finds the cache made.
cache_lock() { # ROOT
    mkdir -p "$1"
    exec 9>"$1/.lock"
    flock 9
}
