// SPDX-License-Identifier: LGPL-3.0-or-later
#include "mds/write_verifier.hpp"

#include <random>

namespace flexfiles::mds {

namespace {

ExportWriteVerifier::Bytes random_base() {
    std::random_device rd;
    ExportWriteVerifier::Bytes b{};
    for (std::size_t i = 0; i < b.size(); i += 4) {
        const std::uint32_t r = rd();
        for (std::size_t j = 0; j < 4; ++j)
            b[i + j] = static_cast<std::uint8_t>(r >> (8 * j));
    }
    return b;
}

} // namespace

ExportWriteVerifier::ExportWriteVerifier(Bytes base) : base_(base) {}

ExportWriteVerifier::ExportWriteVerifier() : ExportWriteVerifier(random_base()) {}

ExportWriteVerifier::Bytes ExportWriteVerifier::current() const noexcept {
    Bytes out = base_;
    const std::uint64_t g = generation();
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] ^= static_cast<std::uint8_t>(g >> (8 * i));
    return out;
}

bool ExportWriteVerifier::observe(std::uint64_t ds_id, const fleet::WriteVerifier& v) {
    std::lock_guard lock(mu_);
    auto [it, first] = seen_.try_emplace(ds_id, v);
    if (first || it->second == v)
        return false;
    it->second = v;
    generation_.fetch_add(1, std::memory_order_acq_rel);
    return true;
}

} // namespace flexfiles::mds
