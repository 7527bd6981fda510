#!/usr/bin/python3
"""Generates whole-model ONNX test cases whose reference outputs come from ONNX Runtime.

Each model is built in PyTorch with a fixed seed, exported with torch.onnx.export and written in
the ONNX backend-test layout that `lathe test-onnx` reads:

    OUT/<name>/model.onnx
    OUT/<name>/test_data_set_0/input_N.pb    (onnx TensorProto: seeded inputs)
    OUT/<name>/test_data_set_0/output_N.pb   (onnx TensorProto: ONNX Runtime's outputs)

The outputs are computed by scripts/ort-reference.js (ONNX Runtime's node binding,
onnxruntime-node), not by PyTorch; PyTorch's outputs only serve as a sanity check of ONNX Runtime
(the max difference is printed, and a large one fails the script).

    /usr/bin/python3 scripts/make-test-models.py            # small models -> tests/onnx/models
    /usr/bin/python3 scripts/make-test-models.py --large    # big variants -> build/models
    /usr/bin/python3 scripts/make-test-models.py --shapes   # other operators and shapes -> build/shapes
    /usr/bin/python3 scripts/make-test-models.py --long     # long-sequence transformers -> build/long
    /usr/bin/python3 scripts/make-test-models.py --zoo      # ResNet-50, ResNeXt-50, DenseNet-121, ResNet-18 x8 -> build/zoo
    /usr/bin/python3 scripts/make-test-models.py --detectors  # SSDlite-320, Faster R-CNN, with NMS, 3 images -> build/detectors
    /usr/bin/python3 scripts/make-test-models.py --layers   # single layers and matmuls, timed alone -> build/layers
    /usr/bin/python3 scripts/make-test-models.py --large --out DIR --only resnet18

Needs python3-torch (1.13, Debian 12), python3-torchvision (the --large CNNs) and numpy, node and onnxruntime-node
(scripts/install-model-deps.sh installs them). The Python `onnx` package is not needed.
"""
import argparse
import math
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from onnx_pb import model_summary, read_tensor_proto, tensor_proto  # noqa: E402

# ------------------------------------------------------------------------------------------------
# Models
# ------------------------------------------------------------------------------------------------
def randomize_batchnorm(model, seed):
    """Gives every BatchNorm non-trivial running statistics and affine parameters, as a trained
    network has (fresh ones are the identity: mean 0, var 1, weight 1, bias 0)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
                n = m.num_features
                m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
                m.weight.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(n, generator=g) * 0.1)


class BasicBlock(nn.Module):
    """ResNet basic block: conv-bn-relu-conv-bn plus a (projected) skip connection, then relu."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNet(nn.Module):
    """Stem (conv-bn-relu-maxpool), stages of basic blocks, global average pool, linear."""

    def __init__(self, widths, blocks, classes, stem_kernel=3, stem_stride=1):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, widths[0], stem_kernel, stem_stride, stem_kernel // 2, bias=False),
            nn.BatchNorm2d(widths[0]), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1))
        layers, cin = [], widths[0]
        for i, (w, n) in enumerate(zip(widths, blocks)):
            for j in range(n):
                layers.append(BasicBlock(cin, w, 2 if (i > 0 and j == 0) else 1))
                cin = w
        self.layers = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))


class MultiHeadAttention(nn.Module):
    """Hand-written multi-head self-attention, as BERT-style models write it."""

    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x, bias):
        b, s, d = x.shape
        split = lambda t: t.view(b, s, self.h, self.dh).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + bias
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.o(ctx.transpose(1, 2).reshape(b, s, d))


class EncoderLayer(nn.Module):
    """Post-norm transformer encoder layer (BERT): attention, add & LayerNorm, GELU MLP, add & LayerNorm."""

    def __init__(self, d, heads, ff):
        super().__init__()
        self.attn = MultiHeadAttention(d, heads)
        self.ln1 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, ff)
        self.fc2 = nn.Linear(ff, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, x, bias):
        x = self.ln1(x + self.attn(x, bias))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))


class TransformerEncoder(nn.Module):
    """Token + learned position embeddings (Gather), padding mask as an additive bias, encoder
    layers, then a pooled classifier head. Outputs: the hidden states and the class logits."""

    def __init__(self, vocab, seq, d, heads, ff, layers, classes):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.ln = nn.LayerNorm(d)
        self.layers = nn.ModuleList(EncoderLayer(d, heads, ff) for _ in range(layers))
        self.head = nn.Linear(d, classes)

    def forward(self, ids, mask):
        pos = torch.arange(ids.shape[1], dtype=torch.long).unsqueeze(0)
        x = self.ln(self.tok(ids) + self.pos(pos))
        bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, bias)
        pooled = torch.tanh(x[:, 0])
        return x, self.head(pooled)


class TorchTransformer(nn.Module):
    """nn.TransformerEncoder (pre-norm, GELU) over float features, mean pooled, linear head."""

    def __init__(self, d, heads, ff, layers, classes):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        return self.head(self.enc(x).mean(dim=1))


class DecoderBlock(nn.Module):
    """GPT-2's pre-norm block: causal multi-head self-attention, then a GELU MLP, each residual."""

    def __init__(self, d, heads, seq):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("future", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1))

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        heads = lambda t: t.view(b, s, self.h, self.dh).transpose(1, 2)  # noqa: E731
        q, k, v = heads(q), heads(k), heads(v)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh)
        scores = scores.masked_fill(self.future[:s, :s], float("-inf"))
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(ctx)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class GPTDecoder(nn.Module):
    """A GPT-style language model: token and learned position embeddings, causal decoder blocks,
    a final LayerNorm and the logits of the next token at every position."""

    def __init__(self, vocab, seq, d, heads, layers):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(DecoderBlock(d, heads, seq) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], dtype=torch.long).unsqueeze(0)
        x = self.tok(ids) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


class LSTMClassifier(nn.Module):
    """Two-layer bidirectional LSTM over a batch-first sequence; last step -> linear."""

    def __init__(self, fin, hidden, layers, classes):
        super().__init__()
        self.rnn = nn.LSTM(fin, hidden, layers, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


class LSTMTagger(nn.Module):
    """Unidirectional LSTM sequence tagger: a label score for every step."""

    def __init__(self, fin, hidden, classes):
        super().__init__()
        self.rnn = nn.LSTM(fin, hidden, 1, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y)


class GRUModel(nn.Module):
    """GRU with an initial state; outputs the sequence projection and the final state."""

    def __init__(self, fin, hidden, classes):
        super().__init__()
        self.rnn = nn.GRU(fin, hidden, 1)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, x, h0):
        y, h = self.rnn(x, h0)
        return self.fc(y), h


class ScriptedRNN(nn.Module):
    """An RNN cell run by a scripted Python loop over the sequence, appending each state to a
    list: torch.onnx exports a Loop over x.shape[1] that carries a sequence (SequenceInsert), as
    exported decoders and custom recurrences are."""

    def __init__(self, fin, hidden):
        super().__init__()
        self.inp = nn.Linear(fin, hidden)
        self.cell = nn.Linear(hidden, hidden)
        self.hidden = hidden

    def forward(self, x):
        h = torch.zeros(x.shape[0], self.hidden)
        states = []
        for t in range(x.size(1)):
            h = torch.tanh(self.cell(h) + self.inp(x[:, t]))
            states.append(h)
        return h, torch.stack(states, 1)


class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        layers = []
        for i in range(len(sizes) - 1):
            layers.append(nn.Linear(sizes[i], sizes[i + 1]))
            if i < len(sizes) - 2:
                layers += [nn.BatchNorm1d(sizes[i + 1]), nn.SiLU()]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return torch.log_softmax(self.net(x), dim=-1)


def rng(seed):
    return np.random.RandomState(seed)


def token_inputs(seed, batch, seq, vocab, pad):
    r = rng(seed)
    ids = r.randint(0, vocab, size=(batch, seq)).astype(np.int64)
    mask = np.ones((batch, seq), dtype=np.int64)
    for b in range(batch):  # the last rows are padding, one more for each batch row
        n = pad + b
        if n:
            mask[b, seq - n:] = 0
            ids[b, seq - n:] = 0
    return [("input_ids", ids), ("attention_mask", mask)]


def small_models():
    """name -> spec. Each spec: build (seeded), inputs [(name, array)], outputs [names], opset,
    and `training` (torch.onnx.TrainingMode). EVAL folds BatchNorm into the preceding Conv, as
    every exported inference model has it; PRESERVE keeps BatchNormalization nodes."""
    return {
        "cnn_resnet": dict(
            build=lambda: ResNet([16, 32], [1, 1], 10), seed=1, bn_seed=101,
            inputs=[("image", rng(11).standard_normal((1, 3, 32, 32)).astype(np.float32))],
            outputs=["logits"], opset=13, training=torch.onnx.TrainingMode.EVAL),
        "cnn_resnet_bn": dict(
            build=lambda: ResNet([16, 32], [1, 1], 10), seed=2, bn_seed=102,
            inputs=[("image", rng(12).standard_normal((2, 3, 32, 32)).astype(np.float32))],
            outputs=["logits"], opset=15, training=torch.onnx.TrainingMode.PRESERVE),
        "transformer_encoder": dict(
            build=lambda: TransformerEncoder(vocab=96, seq=16, d=32, heads=4, ff=128, layers=2, classes=5), seed=3,
            inputs=token_inputs(13, batch=2, seq=16, vocab=96, pad=3),
            outputs=["hidden_states", "logits"], opset=17, training=torch.onnx.TrainingMode.EVAL),
        "transformer_torch_nn": dict(
            build=lambda: TorchTransformer(d=32, heads=4, ff=64, layers=2, classes=5), seed=4,
            inputs=[("features", rng(14).standard_normal((2, 12, 32)).astype(np.float32))],
            outputs=["logits"], opset=14, training=torch.onnx.TrainingMode.EVAL),
        "lstm_classifier": dict(
            build=lambda: LSTMClassifier(fin=16, hidden=24, layers=2, classes=6), seed=5,
            inputs=[("sequence", rng(15).standard_normal((2, 10, 16)).astype(np.float32))],
            outputs=["logits"], opset=14, training=torch.onnx.TrainingMode.EVAL),
        "lstm_tagger": dict(
            build=lambda: LSTMTagger(fin=16, hidden=24, classes=5), seed=8,
            inputs=[("sequence", rng(19).standard_normal((2, 10, 16)).astype(np.float32))],
            outputs=["tag_scores"], opset=14, training=torch.onnx.TrainingMode.EVAL),
        "gru_seq": dict(
            build=lambda: GRUModel(fin=12, hidden=20, classes=4), seed=6,
            inputs=[("sequence", rng(16).standard_normal((8, 3, 12)).astype(np.float32)),
                    ("h0", (0.5 * rng(17).standard_normal((1, 3, 20))).astype(np.float32))],
            outputs=["projection", "h_n"], opset=14, training=torch.onnx.TrainingMode.EVAL),
        # Dynamic batch (dim_param "batch"): lathe's Model::prepare serves every batch size from
        # one compiled plan; the test data holds batch 3.
        "cnn_dynamic_batch": dict(
            build=lambda: ResNet([8, 16], [1, 1], 10), seed=9, bn_seed=109,
            inputs=[("image", rng(20).standard_normal((3, 3, 16, 16)).astype(np.float32))],
            outputs=["logits"], opset=13, training=torch.onnx.TrainingMode.EVAL,
            dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}}),
        "mlp_dynamic_batch": dict(
            build=lambda: MLP([32, 64, 10]), seed=10, bn_seed=110,
            inputs=[("x", rng(21).standard_normal((3, 32)).astype(np.float32))],
            outputs=["log_probs"], opset=15, training=torch.onnx.TrainingMode.EVAL,
            dynamic_axes={"x": {0: "batch"}, "log_probs": {0: "batch"}}),
        # A scripted loop over a sequence of dynamic length (dim_params "batch" and "seq"): a Loop
        # whose trip count is a size, carrying a sequence; the test data holds batch 2, 6 steps.
        "rnn_scripted_loop": dict(
            build=lambda: torch.jit.script(ScriptedRNN(fin=8, hidden=16)), seed=11,
            inputs=[("sequence", rng(22).standard_normal((2, 6, 8)).astype(np.float32))],
            outputs=["last_state", "states"], opset=13, training=torch.onnx.TrainingMode.EVAL,
            dynamic_axes={"sequence": {0: "batch", 1: "seq"}, "last_state": {0: "batch"}, "states": {0: "batch", 1: "seq"}}),
        "mlp_bn_silu": dict(
            build=lambda: MLP([64, 128, 64, 10]), seed=7, bn_seed=107,
            inputs=[("x", rng(18).standard_normal((4, 64)).astype(np.float32))],
            outputs=["log_probs"], opset=15, training=torch.onnx.TrainingMode.PRESERVE),
    }


def large_models():
    return {
        "resnet18": dict(  # ResNet-18's layout: 7x7/2 stem, [2, 2, 2, 2] blocks of 64..512 channels
            build=lambda: ResNet([64, 128, 256, 512], [2, 2, 2, 2], 1000, stem_kernel=7, stem_stride=2),
            seed=21, bn_seed=121,
            inputs=[("image", rng(31).standard_normal((1, 3, 224, 224)).astype(np.float32))],
            outputs=["logits"], opset=13, training=torch.onnx.TrainingMode.EVAL),
        "transformer_d256": dict(
            build=lambda: TransformerEncoder(vocab=1000, seq=128, d=256, heads=4, ff=1024, layers=4, classes=10),
            seed=22, inputs=token_inputs(32, batch=1, seq=128, vocab=1000, pad=16),
            outputs=["hidden_states", "logits"], opset=17, training=torch.onnx.TrainingMode.EVAL),
        "gpt_decoder": dict(  # GPT-2's layout at a small size: d 256, 4 heads, 4 blocks, seq 64
            build=lambda: GPTDecoder(vocab=2048, seq=64, d=256, heads=4, layers=4), seed=28,
            inputs=[("input_ids", rng(38).randint(0, 2048, size=(1, 64)).astype(np.int64))],
            outputs=["logits"], opset=17, training=torch.onnx.TrainingMode.EVAL),
        "lstm_h256": dict(
            build=lambda: LSTMClassifier(fin=64, hidden=256, layers=2, classes=10), seed=23,
            inputs=[("sequence", rng(33).standard_normal((1, 64, 64)).astype(np.float32))],
            outputs=["logits"], opset=14, training=torch.onnx.TrainingMode.EVAL),
        **{name: torchvision_model(name, seed) for name, seed in [
            ("squeezenet1_0", 24), ("shufflenet_v2_x0_5", 25), ("mobilenet_v2", 26), ("efficientnet_b0", 27),
            # Shapes the others lack: a 16-channel stem and 8-channel groups (MNASNet, RegNetY),
            # layer norms over channels and 7x7 depthwise (ConvNeXt), shifted windows whose
            # padding is integer arithmetic on shapes (Swin).
            ("mnasnet0_5", 29), ("regnet_y_400mf", 30), ("convnext_tiny", 31), ("swin_t", 32)]},
    }


class UNet(nn.Module):
    """A small U-Net: group and instance norms, a 2x2 ConvTranspose, a bilinear Upsample, skips."""
    def __init__(self, c=32):
        super().__init__()
        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.GroupNorm(8, o), nn.ReLU(),
                                 nn.Conv2d(o, o, 3, padding=1), nn.InstanceNorm2d(o, affine=True), nn.ReLU())
        self.d1, self.d2, self.d3 = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
        self.up2, self.u2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2), block(4 * c, 2 * c)
        self.up1 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.r1, self.u1, self.out = nn.Conv2d(2 * c, c, 1), block(2 * c, c), nn.Conv2d(c, 2, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(nn.functional.max_pool2d(a, 2))
        u = self.u2(torch.cat([self.up2(self.d3(nn.functional.max_pool2d(b, 2))), b], 1))
        return self.out(self.u1(torch.cat([self.r1(self.up1(u)), a], 1)))


class DCGANGenerator(nn.Module):
    """DCGAN's generator: strided 4x4 ConvTransposes from a 1x1 code to a 64x64 image."""
    def __init__(self):
        super().__init__()
        layers, c = [nn.ConvTranspose2d(128, 512, 4, 1, 0, bias=False)], 512
        for o in [256, 128, 64]:
            layers += [nn.BatchNorm2d(c), nn.ReLU(), nn.ConvTranspose2d(c, o, 4, 2, 1, bias=False)]
            c = o
        self.f = nn.Sequential(*layers, nn.BatchNorm2d(c), nn.ReLU(), nn.ConvTranspose2d(c, 3, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.f(z)


class ESPCN(nn.Module):
    """ESPCN super-resolution x3: 9 output channels and a pixel shuffle (DepthToSpace)."""
    def __init__(self, r=3):
        super().__init__()
        self.f = nn.Sequential(nn.Conv2d(1, 64, 5, padding=2), nn.Tanh(), nn.Conv2d(64, 32, 3, padding=1), nn.Tanh(),
                               nn.Conv2d(32, r * r, 3, padding=1), nn.PixelShuffle(r))

    def forward(self, x):
        return self.f(x)


def long_models():
    """Transformers at sequence lengths whose attention scores are tens of MB (lathe runs them a
    block of queries at a time): a causal decoder and an encoder with a padding mask."""
    return {
        "gpt_long": dict(
            build=lambda: GPTDecoder(vocab=512, seq=2048, d=128, heads=4, layers=2), seed=51,
            inputs=[("input_ids", rng(52).randint(0, 512, size=(1, 2048)).astype(np.int64))],
            outputs=["logits"], opset=17, training=torch.onnx.TrainingMode.EVAL),
        "encoder_long": dict(
            build=lambda: TransformerEncoder(vocab=512, seq=1536, d=128, heads=4, ff=256, layers=2, classes=3), seed=53,
            inputs=token_inputs(54, batch=2, seq=1536, vocab=512, pad=36),
            outputs=["hidden_states", "logits"], opset=17, training=torch.onnx.TrainingMode.EVAL),
    }


def shape_models():
    """Architectures whose operators or shapes the set above lacks, each once a cliff (2026-11-23;
    Inception-v3 2026-11-24)."""
    def torchvision_video(name):
        def build():
            import torchvision
            return getattr(torchvision.models.video, name)(weights=None)
        return build

    def deeplab():
        import torchvision

        class Out(nn.Module):
            def __init__(self):
                super().__init__()
                self.m = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, aux_loss=False)

            def forward(self, x):
                return self.m(x)["out"]
        return Out()
    def inception():
        import torchvision
        return torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=False)
    image = lambda seed, shape: [("image", rng(seed).standard_normal(shape).astype(np.float32))]
    common = dict(outputs=["out"], opset=13, training=torch.onnx.TrainingMode.EVAL)
    return {
        "r3d_18": dict(build=torchvision_video("r3d_18"), seed=41, bn_seed=141, inputs=image(51, (1, 3, 8, 112, 112)), **common),
        # The other two video ResNets: 3x3x3 convolutions in the first stage and 1x3x3 after it
        # (MC3), a 1x3x3 then a 3x1x1 for each 3x3x3 (R(2+1)D).
        "mc3_18": dict(build=torchvision_video("mc3_18"), seed=47, bn_seed=147, inputs=image(57, (1, 3, 8, 112, 112)), **common),
        "r2plus1d_18": dict(build=torchvision_video("r2plus1d_18"), seed=48, bn_seed=148, inputs=image(58, (1, 3, 8, 112, 112)), **common),
        "deeplabv3_mobilenet_v3_large": dict(build=deeplab, seed=42, bn_seed=142, inputs=image(52, (1, 3, 224, 224)), **common),
        "unet": dict(build=UNet, seed=43, inputs=image(53, (1, 3, 128, 128)), **common),
        "dcgan_generator": dict(build=DCGANGenerator, seed=44, bn_seed=144, inputs=image(54, (4, 128, 1, 1)), **common),
        "espcn_x3": dict(build=ESPCN, seed=45, inputs=image(55, (1, 1, 224, 224)), **common),
        # 1x7 and 7x1 convolutions over 17x17 maps (a prime row), 147- and 71-pixel rows at 299x299.
        "inception_v3": dict(build=inception, seed=46, bn_seed=146, inputs=image(56, (1, 3, 299, 299)), **common),
    }


def zoo_models():
    """Deeper torchvision CNNs the README's whole-model figures name beside the --large set: the
    bottleneck ResNet-50 (also at batch 2 on a 97x113 image, sizes no tile divides), ResNeXt-50's
    grouped 3x3s, DenseNet-121's concatenations, and ResNet-18 at batch 8."""
    resnet50_odd = torchvision_model("resnet50", 61)
    resnet50_odd["inputs"] = [("image", rng(71).standard_normal((2, 3, 97, 113)).astype(np.float32))]
    resnet18_batch = torchvision_model("resnet18", 64)
    resnet18_batch["inputs"] = [("image", rng(74).standard_normal((8, 3, 224, 224)).astype(np.float32))]
    return {
        **{name: torchvision_model(name, seed) for name, seed in [("resnet50", 60), ("resnext50_32x4d", 62), ("densenet121", 63)]},
        "resnet50_b2_97x113": resnet50_odd,
        "resnet18_b8": resnet18_batch,
    }


def layer_models():
    """Single layers of the CNNs above, timed alone where a model's profile names one kernel
    (`lathe bench build/layers/NAME/model.onnx --profile`): Inception-v3's 1x7 and 7x1 over a
    17x17 map, its 288 -> 384 3x3 of stride 2 on 35x35 and its Conv2d_4a (80 -> 192 on 73x73, by
    Winograd's method) feeding a 1x1 so the transform stores channel blocks, a 2048 -> 320 1x1 on
    8x8, ResNet-50's and ResNeXt-50's 1024 -> 512 1x1 on 14x14 and 1024 -> 2048 on 7x7, and square matmuls of 1024 and 2048. Sums of 1000s of products: lathe's outputs agree with
    ONNX Runtime's to float32 rounding in the summation order, which outputs near 0 show beside
    the runner's default absolute tolerance (`lathe test-onnx build/layers --atol 1e-5` passes)."""
    class ConvRelu(nn.Module):
        def __init__(self, cin, cout, kernel, stride=1, padding=0, then=None):
            super().__init__()
            self.c = nn.Conv2d(cin, cout, kernel, stride=stride, padding=padding)
            self.then = nn.Conv2d(cout, then, 1) if then else None

        def forward(self, x):
            y = torch.relu(self.c(x))
            return self.then(y) if self.then else y

    class MatMul(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.w = nn.Parameter(torch.randn(n, n) / math.sqrt(n))  # outputs of about 1, as a Linear's

        def forward(self, x):
            return x @ self.w
    image = lambda seed, shape: [("image", rng(seed).standard_normal(shape).astype(np.float32))]
    common = dict(outputs=["out"], opset=13, training=torch.onnx.TrainingMode.EVAL)
    layers = {
        "conv1x7_192_17": (lambda: ConvRelu(192, 192, (1, 7), padding=(0, 3)), (1, 192, 17, 17)),
        "conv7x1_192_17": (lambda: ConvRelu(192, 192, (7, 1), padding=(3, 0)), (1, 192, 17, 17)),
        "conv3x3s2_288_384_35": (lambda: ConvRelu(288, 384, 3, stride=2), (1, 288, 35, 35)),
        "conv3x3_80_192_73_then_1x1": (lambda: ConvRelu(80, 192, 3, then=64), (1, 80, 73, 73)),
        "conv1x1_2048_320_8": (lambda: ConvRelu(2048, 320, 1), (1, 2048, 8, 8)),
        "conv1x1_1024_512_14": (lambda: ConvRelu(1024, 512, 1), (1, 1024, 14, 14)),
        "conv1x1_1024_2048_7": (lambda: ConvRelu(1024, 2048, 1), (1, 1024, 7, 7)),
        "matmul_1024": (lambda: MatMul(1024), (1024, 1024)),
        "matmul_2048": (lambda: MatMul(2048), (2048, 2048)),
    }
    return {name: dict(build=build, seed=200 + i, inputs=image(300 + i, shape), **common)
            for i, (name, (build, shape)) in enumerate(layers.items())}


def calibrate_batchnorm(model, features, shape, seed):
    """Sets every BatchNorm's statistics to those of `features` (a function of a batch) over random
    images, as training leaves them: a fresh network's (mean 0, var 1) make a deep detector's features
    vanish, and every class score is then 1/classes."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # a plain average over the batch
    model.train()
    with torch.no_grad():
        features(torch.from_numpy(rng(seed).random(shape).astype(np.float32)))
    model.eval()


def detector_models():
    """Detectors exported with their post-processing (score filter, per-class top-k, non-maximum
    suppression), whose output sizes depend on the image: torchvision's one-stage SSDlite-320 and
    two-stage Faster R-CNN (MobileNetV3, FPN, 320), with seeded random weights and calibrated batch
    norms, on several images."""
    def ssdlite():
        import torchvision
        m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=91)
        calibrate_batchnorm(m, lambda x: m.head(list(m.backbone(x).values())), (4, 3, 320, 320), 180)
        return m
    def faster_rcnn():
        # Two stages: proposals (per-level top-k, NMS), RoIAlign over the feature pyramid, the box
        # head, then per-class NMS. The class and box layers are scaled down: with random weights
        # one class otherwise takes every score, and large box deltas, through exp(), magnify
        # float rounding into pixels.
        import torchvision
        m = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None, num_classes=91)
        calibrate_batchnorm(m, m.backbone, (4, 3, 320, 320), 190)
        with torch.no_grad():
            m.roi_heads.box_predictor.cls_score.weight.mul_(0.002)
            m.roi_heads.box_predictor.cls_score.bias.zero_()
            m.roi_heads.box_predictor.bbox_pred.weight.mul_(0.1)
            m.rpn.head.bbox_pred.weight.mul_(0.1)
        m.roi_heads.score_thresh = 0.017  # tens of detections an image, not a cut at 100 among near-equal scores
        return m
    images = [[("images", rng(81 + i).random((3, 320, 320)).astype(np.float32))] for i in range(3)]
    detector = dict(opset=13, training=torch.onnx.TrainingMode.EVAL, export_args=lambda xs: (list(xs),), detections=True)
    return {
        "ssdlite320": dict(build=ssdlite, seed=80, inputs=images[0], datasets=images, outputs=["boxes", "scores", "labels"],
                           reference=lambda m, xs: [m(list(xs))[0][k] for k in ("boxes", "scores", "labels")], **detector),
        # torchvision returns labels before scores
        "fasterrcnn_mobilenet_v3_320": dict(build=faster_rcnn, seed=0, inputs=images[0], datasets=images,
                                            outputs=["boxes", "labels", "scores"],
                                            reference=lambda m, xs: [m(list(xs))[0][k] for k in ("boxes", "labels", "scores")],
                                            order=(0, 2, 1), box_tol=1.0, **detector),
    }


def torchvision_model(arch, seed):
    """A torchvision architecture (python3-torchvision) with seeded random weights and BatchNorm
    statistics, on one 224x224 image: the networks users run, not lathe-shaped stand-ins."""
    def build():
        import torchvision
        return getattr(torchvision.models, arch)(weights=None)
    return dict(build=build, seed=seed, bn_seed=seed + 100,
                inputs=[("image", rng(seed + 10).standard_normal((1, 3, 224, 224)).astype(np.float32))],
                outputs=["logits"], opset=13, training=torch.onnx.TrainingMode.EVAL)


# ------------------------------------------------------------------------------------------------
def export(name, spec, out_dir):
    torch.manual_seed(spec["seed"])
    model = spec["build"]()
    if "bn_seed" in spec:
        randomize_batchnorm(model, spec["bn_seed"])
    model.eval()
    case = os.path.join(out_dir, name)
    if os.path.isdir(case):
        shutil.rmtree(case)
    datasets = spec.get("datasets", [spec["inputs"]])
    reference = spec.get("reference", lambda m, xs: m(*xs))
    refs = []
    for k, inputs in enumerate(datasets):
        os.makedirs(os.path.join(case, "test_data_set_%d" % k))
        with torch.no_grad():
            ref = reference(model, [torch.from_numpy(a) for _, a in inputs])
        refs.append([t.numpy() for t in ([ref] if isinstance(ref, torch.Tensor) else list(ref))])
        for i, (n, a) in enumerate(inputs):
            with open(os.path.join(case, "test_data_set_%d" % k, "input_%d.pb" % i), "wb") as f:
                f.write(tensor_proto(n, a))
    args = tuple(torch.from_numpy(a) for _, a in spec["inputs"])
    args = spec["export_args"](args) if "export_args" in spec else args
    with warnings.catch_warnings():  # torch 1.13's exporter warns about batch sizes, shape inference
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, os.path.join(case, "model.onnx"), opset_version=spec["opset"],
                          training=spec["training"], do_constant_folding=True,
                          input_names=[n for n, _ in spec["inputs"]], output_names=spec["outputs"],
                          dynamic_axes=spec.get("dynamic_axes"))
    return case, refs


def unmatched_detections(a, b, score_tol=1e-4, box_tol=1e-2):
    """How many of detections `a` (boxes, scores, labels) have no equal in `b`: the same label, a
    score within score_tol and a box within box_tol. Two scores closer than float rounding may
    come in either order, so detections are matched as a set, not by position."""
    if len(a[1]) != len(b[1]):
        return max(len(a[1]), len(b[1]))
    left = list(range(len(b[1])))
    unmatched = 0
    for i in range(len(a[1])):
        found = next((j for j in left if a[2][i] == b[2][j] and abs(a[1][i] - b[1][j]) <= score_tol
                      and np.abs(a[0][i] - b[0][j]).max() <= box_tol), None)
        if found is None:
            unmatched += 1
        else:
            left.remove(found)
    return unmatched


def dir_size(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--large", action="store_true", help="write the big variants (default out: build/models)")
    which.add_argument("--shapes", action="store_true", help="write the architectures with other operators and shapes "
                       "(3-D convolutions, atrous convolutions, resizes, strided ConvTranspose, pixel shuffle; default out: build/shapes)")
    which.add_argument("--long", action="store_true", help="write the long-sequence transformers (default out: build/long)")
    which.add_argument("--zoo", action="store_true", help="write ResNet-50 (also at batch 2 on 97x113), ResNeXt-50, "
                       "DenseNet-121 and ResNet-18 at batch 8 (default out: build/zoo)")
    which.add_argument("--layers", action="store_true", help="write single layers of those CNNs and square matmuls, "
                       "timed alone (default out: build/layers)")
    which.add_argument("--detectors", action="store_true", help="write detectors with their post-processing "
                       "(SSDlite-320, Faster R-CNN; several images; default out: build/detectors)")
    ap.add_argument("--out", help="output folder (default tests/onnx/models; build/models with --large, build/shapes with "
                    "--shapes, build/long with --long, build/zoo with --zoo)")
    ap.add_argument("--only", nargs="*", help="model names to generate (default: all of the set)")
    ap.add_argument("--node", default=os.environ.get("NODE", "node"), help="node executable")
    ap.add_argument("--threads", type=int, default=1, help="PyTorch threads (default 1)")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    specs = (shape_models() if args.shapes else long_models() if args.long else zoo_models() if args.zoo
             else detector_models() if args.detectors else layer_models() if args.layers
             else large_models() if args.large else small_models())
    if args.list:
        print("\n".join(specs))
        return 0
    if args.only:
        unknown = sorted(set(args.only) - set(specs))
        if unknown:
            ap.error("unknown model(s) %s; choose from %s" % (unknown, ", ".join(specs)))
        specs = {k: v for k, v in specs.items() if k in args.only}
    out = args.out or (os.path.join(ROOT, "build", "shapes") if args.shapes
                       else os.path.join(ROOT, "build", "long") if args.long
                       else os.path.join(ROOT, "build", "zoo") if args.zoo
                       else os.path.join(ROOT, "build", "detectors") if args.detectors
                       else os.path.join(ROOT, "build", "layers") if args.layers
                       else os.path.join(ROOT, "build", "models") if args.large
                       else os.path.join(ROOT, "tests", "onnx", "models"))
    os.makedirs(out, exist_ok=True)

    torch_out = {}
    for name, spec in specs.items():
        case, ref = export(name, spec, out)
        torch_out[name] = (case, ref)
        print("exported %s" % case, flush=True)

    # ONNX Runtime writes the reference outputs.
    js = os.path.join(ROOT, "scripts", "ort-reference.js")
    subprocess.run([args.node, js] + [c for c, _ in torch_out.values()], check=True)

    # Sanity check of ONNX Runtime against PyTorch.
    bad = []
    for name, (case, refs) in torch_out.items():
        opsets, ops, _ = model_summary(os.path.join(case, "model.onnx"))
        print("%s: opset %s, %d nodes: %s" % (name, opsets.get("ai.onnx"), sum(ops.values()),
                                              " ".join("%s:%d" % kv for kv in sorted(ops.items()))))
        if specs[name].get("detections"):
            order = specs[name].get("order", (0, 1, 2))  # where boxes, scores and labels are among the outputs
            for k, ref in enumerate(refs):
                got = [read_tensor_proto(open(os.path.join(case, "test_data_set_%d" % k, "output_%d.pb" % i), "rb").read())[1]
                       for i in range(3)]
                unmatched = unmatched_detections([got[i] for i in order], [ref[i] for i in order],
                                                 box_tol=specs[name].get("box_tol", 1e-2))
                print("  data set %d: %d detections, %d without an equal in PyTorch's" % (k, len(ref[1]), unmatched))
                if unmatched:
                    bad.append(name)
            continue
        ref = refs[0]
        for i, t in enumerate(ref):
            oname, o = read_tensor_proto(open(os.path.join(case, "test_data_set_0", "output_%d.pb" % i), "rb").read())
            if o.shape != t.shape or o.dtype != t.dtype:
                bad.append(name)
                print("  output %d %s: ORT %s %s vs torch %s %s" % (i, oname, o.shape, o.dtype, t.shape, t.dtype))
                continue
            diff = np.abs(o.astype(np.float64) - t.astype(np.float64))
            scale = float(np.max(np.abs(t))) or 1.0
            print("  output %d %s %s: ORT vs torch max abs diff %.3g (max |torch| %.3g, rel to it %.3g)"
                  % (i, oname, "x".join(map(str, o.shape)), diff.max(), scale, diff.max() / scale))
            if not np.allclose(o, t, rtol=1e-3, atol=1e-4 * scale):
                bad.append(name)
        print("  size %.1f KiB" % (dir_size(case) / 1024))
    print("total %.1f KiB in %s" % (sum(dir_size(c) for c, _ in torch_out.values()) / 1024, out))
    if bad:
        print("ONNX Runtime and PyTorch disagree on: %s" % ", ".join(sorted(set(bad))), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
