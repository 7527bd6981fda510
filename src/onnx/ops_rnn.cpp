// Recurrent ONNX operators (RNN, GRU, LSTM), unrolled over the sequence with the default
// activations (tanh, sigmoid): the input's projection for all steps as one matmul, then each step
// a few matmuls and elementwise ops on the state, which fuse.
#include "onnx/ops.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Tensor>;

enum class Cell { Rnn, Gru, Lstm };

int64_t gates_of(Cell k) { return k == Cell::Rnn ? 1 : k == Cell::Gru ? 3 : 4; }

// Gate g of a (…, gates*H) tensor along its last axis.
Tensor gate(const Tensor& t, int64_t g, int64_t h) { return t.slice(-1, g * h, (g + 1) * h); }

V recurrent(const OpContext& c, Cell kind) {
  for (const char* a : {"activations", "clip"})
    if (c.has_attr(a)) c.fail(std::string("attribute '") + a + "' is not supported");
  bool batch_first = c.attr_i("layout", 0) != 0;
  Tensor x = c.in(0), w = c.in(1), r = c.in(2);  // x: (seq, batch, in); w: (dirs, G*H, in); r: (dirs, G*H, H)
  if (batch_first) x = x.transpose(0, 1);
  if (c.has(4)) {
    for (int64_t len : c.ints(4))
      if (len != x.shape()[0]) c.fail("sequence_lens shorter than the sequence are not supported");
  }
  auto state = [&](size_t i) { return batch_first ? c.in(i).transpose(0, 1) : c.in(i); };  // (dirs, batch, H)
  int64_t seq = x.shape()[0], batch = x.shape()[1], dirs = w.shape()[0], g = gates_of(kind);
  int64_t hs = c.attr_i("hidden_size", r.shape().back());
  std::string direction = c.attr_s("direction", "forward");
  if ((direction == "bidirectional") != (dirs == 2)) c.fail("direction '" + direction + "' with " + std::to_string(dirs) + " weight sets");
  bool lbr = c.attr_i("linear_before_reset", 0) != 0;
  std::vector<Tensor> ys, hs_last, cs_last;
  for (int64_t d = 0; d < dirs; ++d) {
    Tensor wd = w.slice(0, d, d + 1).squeeze(0).transpose(0, 1);  // (in, G*H)
    Tensor rd = r.slice(0, d, d + 1).squeeze(0);                  // (G*H, H)
    Tensor wb = Tensor::zeros({g * hs}, x.dtype()), rb = Tensor::zeros({g * hs}, x.dtype());
    if (c.has(3)) {
      Tensor b = c.in(3).slice(0, d, d + 1).squeeze(0);
      wb = b.slice(0, 0, g * hs), rb = b.slice(0, g * hs, 2 * g * hs);
    }
    Tensor h = c.has(5) ? state(5).slice(0, d, d + 1).squeeze(0) : Tensor::zeros({batch, hs}, x.dtype());
    Tensor cell = c.has(6) && kind == Cell::Lstm ? state(6).slice(0, d, d + 1).squeeze(0) : Tensor::zeros({batch, hs}, x.dtype());
    std::optional<Tensor> peep;
    if (kind == Cell::Lstm && c.has(7)) peep = c.in(7).slice(0, d, d + 1).squeeze(0);  // (3H): i, o, f
    bool reverse = direction == "reverse" || d == 1;
    // The input's part of every step at once, as one matmul (what does not depend on the state
    // need not wait for it); each step reads its rows as a view, so the steps' kernels are one
    // kernel on different buffers.
    int64_t in = x.shape()[2];
    Tensor xw_all = (x.reshape({seq * batch, in}).matmul(wd) + wb).reshape({seq, batch, g * hs}).contiguous();
    std::vector<Tensor> steps(static_cast<size_t>(seq));
    for (int64_t s = 0; s < seq; ++s) {
      int64_t t = reverse ? seq - 1 - s : s;
      Tensor xw = xw_all.slice(0, t, t + 1).squeeze(0).contiguous();  // (batch, G*H)
      if (kind == Cell::Rnn) {
        h = (xw + h.matmul(rd.transpose(0, 1)) + rb).tanh();
      } else if (kind == Cell::Gru) {
        Tensor rz = rd.slice(0, 0, 2 * hs).transpose(0, 1), rh = rd.slice(0, 2 * hs, 3 * hs).transpose(0, 1);
        Tensor hr = h.matmul(rz) + rb.slice(0, 0, 2 * hs);
        Tensor z = (gate(xw, 0, hs) + gate(hr, 0, hs)).sigmoid();
        Tensor rr = (gate(xw, 1, hs) + gate(hr, 1, hs)).sigmoid();
        Tensor rbh = rb.slice(0, 2 * hs, 3 * hs);
        Tensor cand = lbr ? (gate(xw, 2, hs) + rr * (h.matmul(rh) + rbh)).tanh() : (gate(xw, 2, hs) + (rr * h).matmul(rh) + rbh).tanh();
        h = (1.0f - z) * cand + z * h;
      } else {
        Tensor gates = xw + h.matmul(rd.transpose(0, 1)) + rb;
        Tensor i = gate(gates, 0, hs), o = gate(gates, 1, hs), f = gate(gates, 2, hs), cc = gate(gates, 3, hs);
        if (peep) i = i + peep->slice(0, 0, hs) * cell, f = f + peep->slice(0, 2 * hs, 3 * hs) * cell;
        cell = f.sigmoid() * cell + i.sigmoid() * cc.tanh();
        if (peep) o = o + peep->slice(0, hs, 2 * hs) * cell;
        h = o.sigmoid() * cell.tanh();
      }
      h = h.cast(x.dtype()).contiguous();
      cell = cell.cast(x.dtype()).contiguous();
      steps[static_cast<size_t>(t)] = h.unsqueeze(0);  // (1, batch, H)
    }
    ys.push_back(Tensor::cat(steps, 0).unsqueeze(1));  // (seq, 1, batch, H)
    hs_last.push_back(h.unsqueeze(0));
    cs_last.push_back(cell.unsqueeze(0));
  }
  V out{Tensor::cat(ys, 1), Tensor::cat(hs_last, 0)};
  if (kind == Cell::Lstm) out.push_back(Tensor::cat(cs_last, 0));
  if (batch_first) {  // Y as (batch, seq, dirs, H), states as (batch, dirs, H)
    out[0] = out[0].permute({2, 0, 1, 3});
    for (size_t i = 1; i < out.size(); ++i) out[i] = out[i].transpose(0, 1);
  }
  return out;
}

}  // namespace

void register_rnn_ops(std::map<std::string, OpFn>& t) {
  t["RNN"] = [](const OpContext& c) { return recurrent(c, Cell::Rnn); };
  t["GRU"] = [](const OpContext& c) { return recurrent(c, Cell::Gru); };
  t["LSTM"] = [](const OpContext& c) { return recurrent(c, Cell::Lstm); };
}

}  // namespace lathe::onnx::detail
