"""PyTorch on the CPU: a small MLP trained with SGD on random data (forward,
backward, optimizer step): native kernels on a few threads driven by Python."""
import sys

import torch


def main(scale):
    torch.manual_seed(1)
    x = torch.randn(512, 64)
    y = torch.randn(512, 1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss = None
    for _ in range(max(1, int(100 * scale))):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    print(round(main(float(sys.argv[1])), 4))
