"""Records PyTorch goldens for layers' Transformer parity test (layers/transformer_parity_test.go).

    CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/transformer_parity.py layers/testdata/transformer

For each case it builds the PyTorch module in float64 with a fixed seed (random
LayerNorm parameters and biases too), runs it on a padded batch with key padding
masks (and the decoder's causal mask), and writes <case>.safetensors holding:
the module's weights under Plumb's parameter names in Plumb's layouts
(MultiHeadAttention kernels [D, heads, key_dim] and [heads, key_dim, D],
Linear kernels [in, out]), the inputs, the lengths, the output, a random
cotangent r and the gradient of sum(out * r) with respect to each input;
label_smoothing holds CrossEntropyLoss(label_smoothing=0.1)'s loss and its
gradient.
"""

import os
import sys

import torch
from safetensors.torch import save_file

torch.set_default_dtype(torch.float64)


def mha_weights(prefix, m, d, heads):
    """nn.MultiheadAttention's packed in_proj and out_proj as layers.MultiHeadAttention's kernels."""
    dh = d // heads
    w, b = m.in_proj_weight.detach(), m.in_proj_bias.detach()
    out = {}
    for i, name in enumerate(["query", "key", "value"]):
        out[f"{prefix}/{name}/kernel"] = w[i * d:(i + 1) * d].T.reshape(d, heads, dh).contiguous()
        out[f"{prefix}/{name}/bias"] = b[i * d:(i + 1) * d].reshape(heads, dh).contiguous()
    out[f"{prefix}/attention_output/kernel"] = m.out_proj.weight.detach().T.reshape(heads, dh, d).contiguous()
    out[f"{prefix}/attention_output/bias"] = m.out_proj.bias.detach().clone()
    return out


def linear(prefix, m):
    return {f"{prefix}/kernel": m.weight.detach().T.contiguous(), f"{prefix}/bias": m.bias.detach().clone()}


def norm(prefix, m):
    return {f"{prefix}/gamma": m.weight.detach().clone(), f"{prefix}/beta": m.bias.detach().clone()}


def randomize(module):
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("bias") or "norm" in name:
                p.copy_(torch.randn_like(p) * 0.5 + (1 if name.endswith("weight") else 0))


def padding_mask(lengths, t):
    """PyTorch's key_padding_mask: True at padded keys."""
    return torch.arange(t)[None, :] >= torch.tensor(lengths)[:, None]


def grads(out, inputs):
    r = torch.randn_like(out)
    g = torch.autograd.grad((out * r).sum(), inputs)
    return r, g


def mha_case():
    d, heads, lengths = 8, 2, [6, 3]
    m = torch.nn.MultiheadAttention(d, heads, batch_first=True)
    randomize(m)
    q = torch.randn(2, 5, d, requires_grad=True)
    kv = torch.randn(2, 6, d, requires_grad=True)
    out, _ = m(q, kv, kv, key_padding_mask=padding_mask(lengths, 6), need_weights=False)
    r, (gq, gkv) = grads(out, (q, kv))
    t = mha_weights("mha", m, d, heads)
    t.update(x=q.detach(), memory=kv.detach(), key_lengths=torch.tensor(lengths), out=out.detach(), r=r, grad_x=gq, grad_memory=gkv)
    return t


def encoder_case(norm_first, activation):
    d, heads, ff, lengths = 8, 2, 12, [5, 3, 1]
    m = torch.nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first)
    randomize(m)
    m.eval()
    x = torch.randn(3, 5, d, requires_grad=True)
    out = m(x, src_key_padding_mask=padding_mask(lengths, 5))
    r, (gx,) = grads(out, (x,))
    t = mha_weights("enc/self_attention", m.self_attn, d, heads)
    t.update(linear("enc/linear1", m.linear1))
    t.update(linear("enc/linear2", m.linear2))
    t.update(norm("enc/norm1", m.norm1))
    t.update(norm("enc/norm2", m.norm2))
    t.update(x=x.detach(), key_lengths=torch.tensor(lengths), out=out.detach(), r=r, grad_x=gx)
    return t


def decoder_case(norm_first):
    d, heads, ff, tgt_lengths, mem_lengths = 8, 4, 10, [4, 2], [3, 5]
    m = torch.nn.TransformerDecoderLayer(d, heads, ff, dropout=0.0, batch_first=True, norm_first=norm_first)
    randomize(m)
    m.eval()
    y = torch.randn(2, 4, d, requires_grad=True)
    mem = torch.randn(2, 5, d, requires_grad=True)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(4)
    out = m(y, mem, tgt_mask=causal, tgt_is_causal=True, tgt_key_padding_mask=padding_mask(tgt_lengths, 4),
            memory_key_padding_mask=padding_mask(mem_lengths, 5))
    r, (gy, gmem) = grads(out, (y, mem))
    t = mha_weights("dec/self_attention", m.self_attn, d, heads)
    t.update(mha_weights("dec/cross_attention", m.multihead_attn, d, heads))
    t.update(linear("dec/linear1", m.linear1))
    t.update(linear("dec/linear2", m.linear2))
    for i in (1, 2, 3):
        t.update(norm(f"dec/norm{i}", getattr(m, f"norm{i}")))
    t.update(x=y.detach(), memory=mem.detach(), key_lengths=torch.tensor(tgt_lengths), memory_lengths=torch.tensor(mem_lengths),
             out=out.detach(), r=r, grad_x=gy, grad_memory=gmem)
    return t


def label_smoothing_case():
    logits = torch.randn(6, 7, requires_grad=True)
    labels = torch.tensor([0, 6, 3, 3, 1, 5])
    loss = torch.nn.CrossEntropyLoss(label_smoothing=0.1)(logits, labels)
    (g,) = torch.autograd.grad(loss, (logits,))
    return dict(x=logits.detach(), labels=labels, out=loss.detach().reshape(()), grad_x=g)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cases = {
        "mha": mha_case,
        "encoder_post_relu": lambda: encoder_case(False, "relu"),
        "encoder_pre_gelu": lambda: encoder_case(True, "gelu"),
        "decoder_post": lambda: decoder_case(False),
        "decoder_pre": lambda: decoder_case(True),
        "label_smoothing": label_smoothing_case,
    }
    for i, (name, make) in enumerate(cases.items()):
        torch.manual_seed(36 + i)
        save_file({k: v.contiguous() for k, v in make().items()}, os.path.join(out, name + ".safetensors"))


if __name__ == "__main__":
    main()
