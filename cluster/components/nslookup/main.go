// Command nslookup resolves a name as alpine 3.10's nslookup does: busybox's nslookup of that
// release asked the C library, so the name is tried with the resolv.conf search list and the
// lookup succeeds when any of those names resolves. (Later busybox releases ask every search
// domain themselves and fail when one of them does not resolve, which makes training-operator's
// init container wait forever on a Kubernetes cluster; the real node must run what alpine:3.10
// runs.)
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: nslookup NAME")
		os.Exit(1)
	}
	name := os.Args[1]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nslookup: can't resolve '%s': %v\n", name, err)
		os.Exit(1)
	}
	fmt.Printf("Name:      %s\n", name)
	for i, a := range addrs {
		fmt.Printf("Address %d: %s\n", i+1, a)
	}
}
