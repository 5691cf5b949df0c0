"""A small ResNet-style classifier ported from PyTorch to MindSpore, as a first port often looks.

`ms-lint check examples/` finds the pitfalls left in it; see the README for a fix session.
"""
import numpy as np
import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops


class ResidualBlock(nn.Cell):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, pad_mode="pad", padding=1)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, pad_mode="pad", padding=1)
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()

    def construct(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


class PortedResNet(nn.Cell):
    def __init__(self, num_classes=10, channels=16, depth=3):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, pad_mode="pad", padding=1)
        # torch: self.blocks = nn.ModuleList([...]); a plain list does not register the blocks
        self.blocks = [ResidualBlock(channels) for _ in range(depth)]
        self.head = nn.Dense(channels, num_classes)
        self.class_counts = Parameter(Tensor(np.zeros(num_classes, np.float32)), name="class_counts",
                                      requires_grad=False)

    def pool(self, x):
        # torch: x.mean(dim=(2, 3)) was ported through NumPy
        return Tensor(np.mean(x.asnumpy(), axis=(2, 3)))

    def construct(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.pool(x))
        # torch: self.class_counts[:3] += 1 (a buffer update)
        self.class_counts[:3] += 1
        logits[:, 0:1].clamp_(-10.0, 10.0)
        return logits


if __name__ == "__main__":
    ms.set_context(mode=ms.GRAPH_MODE)
    net = PortedResNet()
    print(net(Tensor(np.random.rand(2, 3, 8, 8).astype(np.float32))).shape)
