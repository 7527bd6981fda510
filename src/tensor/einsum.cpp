// Einsum as broadcast multiply and sum: every operand's axes are laid out in one label order
// (output labels first, summed labels after), multiplied, and the summed labels reduced. A label
// repeated within one operand takes its diagonal; '...' stands for the axes a term does not name.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>

#include "lathe/tensor.hpp"

namespace lathe {
namespace {

[[noreturn]] void fail_einsum(const std::string& equation, const std::string& why) {
  throw ShapeError("einsum '" + equation + "': " + why);
}

}  // namespace

Tensor Tensor::einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  auto fail = [&](const std::string& why) { fail_einsum(equation, why); };
  if (operands.empty()) fail("needs at least one operand");
  std::string eq;
  for (char ch : equation)
    if (ch != ' ') eq += ch;
  {
    std::string rest = eq;  // what is left once '->' and '...' are taken out: letters and commas
    for (const char* token : {"->", "..."})
      for (size_t at; (at = rest.find(token)) != std::string::npos;) rest.erase(at, std::strlen(token));
    for (char ch : rest)
      if (!std::isalpha(static_cast<unsigned char>(ch)) && ch != ',')
        fail("the equation has a character other than letters, ',', '...' and '->'");
  }
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != operands.size()) fail("the equation names " + std::to_string(terms.size()) + " operands, " + std::to_string(operands.size()) + " given");
  // '...' stands for the leading axes a term does not name; they broadcast, right-aligned, and
  // get labels of their own (digits, which the equation cannot use).
  size_t ellipsis_dims = 0;
  for (size_t k = 0; k < terms.size(); ++k)
    if (terms[k].find("...") != std::string::npos) {
      int64_t named = static_cast<int64_t>(terms[k].size()) - 3;
      if (operands[k].ndim() < named) fail("operand " + std::to_string(k) + " has fewer axes than '" + terms[k] + "' names");
      ellipsis_dims = std::max(ellipsis_dims, static_cast<size_t>(operands[k].ndim() - named));
    }
  if (ellipsis_dims > 10) fail("'...' covers more than 10 axes");
  std::string ellipsis_labels;
  for (size_t i = 0; i < ellipsis_dims; ++i) ellipsis_labels += static_cast<char>('0' + i);
  for (size_t k = 0; k < terms.size(); ++k) {
    size_t at = terms[k].find("...");
    if (at == std::string::npos) continue;
    size_t mine = static_cast<size_t>(operands[k].ndim()) - (terms[k].size() - 3);
    terms[k].replace(at, 3, ellipsis_labels.substr(ellipsis_dims - mine));
  }
  if (arrow != std::string::npos) {
    std::string rhs = eq.substr(arrow + 2);
    if (size_t at = rhs.find("..."); at != std::string::npos) rhs.replace(at, 3, ellipsis_labels);
    eq = eq.substr(0, arrow + 2) + rhs;
  }
  lhs.clear();
  for (const std::string& t : terms) lhs += t + ",";
  std::string all;
  for (const std::string& t : terms)
    for (char ch : t)
      if (all.find(ch) == std::string::npos) all += ch;
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
  } else {
    for (char ch : all)
      if (std::count(lhs.begin(), lhs.end(), ch) == 1 && !std::isdigit(static_cast<unsigned char>(ch))) out += ch;
    std::sort(out.begin(), out.end());
    out = ellipsis_labels + out;
  }
  for (char ch : out)
    if (all.find(ch) == std::string::npos) fail(std::string("output label ") + ch + " names no input axis");
  std::string order = out;
  for (char ch : all)
    if (out.find(ch) == std::string::npos) order += ch;
  std::map<char, int64_t> size;
  std::optional<Tensor> prod;
  for (size_t k = 0; k < terms.size(); ++k) {
    std::string t = terms[k];
    Tensor x = operands[k];
    if (static_cast<int64_t>(t.size()) != x.ndim()) fail("operand " + std::to_string(k) + " has " + std::to_string(x.ndim()) + " axes, '" + t + "' names " + std::to_string(t.size()));
    // A label repeated within one operand takes its diagonal: mask off the rest, sum one axis away.
    for (size_t q = 1; q < t.size(); ++q) {
      size_t p = t.find(t[q]);
      if (p == q) continue;
      if (x.shape()[p] != x.shape()[q]) fail(std::string("label ") + t[q] + " has two sizes in operand " + std::to_string(k));
      Shape mask_shape(static_cast<size_t>(x.ndim()), 1);
      mask_shape[p] = mask_shape[q] = x.shape()[p];
      Tensor eye = Tensor::eye(x.shape()[p], dtypes::bool_).reshape(mask_shape);
      x = eye.where(x, Tensor::zeros({}, x.dtype())).sum({static_cast<int64_t>(q)}).cast(x.dtype());
      t.erase(q, 1);
      --q;
    }
    for (size_t i = 0; i < t.size(); ++i) {
      int64_t n = x.shape()[i];
      auto [it, fresh] = size.emplace(t[i], n);
      if (!fresh && it->second != n && it->second != 1 && n != 1) fail(std::string("label ") + t[i] + " has two sizes");
      if (it->second == 1) it->second = n;
    }
    std::vector<int64_t> perm;
    Shape shape;
    for (char ch : order) {
      size_t p = t.find(ch);
      if (p != std::string::npos) perm.push_back(static_cast<int64_t>(p));
    }
    x = x.permute(perm);
    size_t j = 0;
    for (char ch : order) shape.push_back(t.find(ch) != std::string::npos ? x.shape()[j++] : 1);
    x = x.reshape(shape);
    prod = prod ? *prod * x : x;
  }
  std::vector<int64_t> summed;
  for (size_t i = out.size(); i < order.size(); ++i) summed.push_back(static_cast<int64_t>(i));
  Tensor r = summed.empty() ? *prod : prod->sum(summed);
  return r.cast(operands[0].dtype());
}

}  // namespace lathe
