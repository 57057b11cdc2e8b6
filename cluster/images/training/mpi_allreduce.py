"""An MPI program for the real node's tests: every rank adds rank + 1 with an allreduce, so the
sum proves that every rank took part, and rank 0 prints one JSON line:
  {"event": "allreduce", "world_size", "sum", "expected", "hosts"}
hosts being the host names the ranks ran on.
"""
import json
import socket

from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    total = comm.allreduce(rank + 1, op=MPI.SUM)
    hosts = comm.gather(socket.gethostname(), root=0)
    if rank == 0:
        print(json.dumps({"event": "allreduce", "world_size": size, "sum": total,
                          "expected": size * (size + 1) // 2, "hosts": sorted(set(hosts))},
                         sort_keys=True), flush=True)


if __name__ == "__main__":
    main()
