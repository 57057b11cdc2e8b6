"""An MPI program for the real node's tests: every rank adds rank + 1 with an allreduce, so the
sum proves that every rank took part, and rank 0 prints one JSON line:
  {"event": "allreduce", "world_size", "sum", "expected", "hosts", "runs"}
hosts being the host names the ranks ran on, and runs each rank's TRAINING_RUN variable (null
where a rank does not have it), which shows what of the job's environment reaches the ranks.
"""
import json
import os
import socket

from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    total = comm.allreduce(rank + 1, op=MPI.SUM)
    hosts = comm.gather(socket.gethostname(), root=0)
    runs = comm.gather(os.environ.get("TRAINING_RUN"), root=0)
    if rank == 0:
        print(json.dumps({"event": "allreduce", "world_size": size, "sum": total,
                          "expected": size * (size + 1) // 2, "hosts": sorted(set(hosts)), "runs": runs},
                         sort_keys=True), flush=True)


if __name__ == "__main__":
    main()
