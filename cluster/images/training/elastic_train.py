"""A small data-parallel training program for the real node's tests: a linear model fitted to
y = 3x + 2 with gloo on CPU, its gradients averaged over every rank each step.

It prints one JSON line per event (the tests read them in the pod logs):
  {"event": "start", "rank", "world_size", "resumed_from", "restart"}   every rank, each (re)start
  {"event": "step", "step", "loss", "world_size"}                        rank 0, each step
  {"event": "done", "step", "world_size", "w", "b"}                       rank 0, at the end
Rank 0 checkpoints the model and the step to --checkpoint (a folder the job's pods share) every
step, so that a restart after a rescale resumes from the last step, never from step 0; at each
start every rank takes rank 0's step and parameters. Training
ends after --steps steps, or at the first step after the file --finish-when exists.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist


def emit(**fields):
    print(json.dumps(fields, sort_keys=True), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", required=True, help="folder shared by the job's pods")
    p.add_argument("--steps", type=int, default=1000000)
    p.add_argument("--finish-when", default="", help="a file whose existence ends the training")
    p.add_argument("--step-seconds", type=float, default=0.5)
    args = p.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    path = os.path.join(args.checkpoint, "checkpoint.pt")
    step = 0
    if os.path.exists(path):
        state = torch.load(path)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step = state["step"]
    # Every rank goes on from rank 0's state, whatever it found.
    resumed = torch.tensor([step])
    dist.broadcast(resumed, 0)
    step = int(resumed.item())
    for param in model.parameters():
        dist.broadcast(param.data, 0)
    emit(event="start", rank=rank, world_size=world, resumed_from=step,
         restart=int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")))

    gen = torch.Generator().manual_seed(1000 + rank)
    while step < args.steps:
        x = torch.rand(64, 1, generator=gen) * 4 - 2
        y = 3 * x + 2
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        for param in model.parameters():
            dist.all_reduce(param.grad)
            param.grad /= world
        total = loss.detach().clone()
        dist.all_reduce(total)
        opt.step()
        step += 1
        finish = torch.tensor([1 if args.finish_when and os.path.exists(args.finish_when) else 0])
        dist.broadcast(finish, 0)
        if rank == 0:
            tmp = path + ".tmp"
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, tmp)
            os.replace(tmp, path)
            emit(event="step", step=step, loss=round(total.item() / world, 6), world_size=world)
        if finish.item():
            break
        time.sleep(args.step_seconds)
    if rank == 0:
        emit(event="done", step=step, world_size=world,
             w=round(model.weight.item(), 4), b=round(model.bias.item(), 4))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
