// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Fuzz target wcc_fattr4: the values of one ffdsw_attributes (RFC 9766 Table 1) through
// the decoder LAYOUT_WCC uses (cache/owner_map.hpp: decode_table1, then the owner strings
// through an OwnerMap whose stand-in idmapper knows a few names). Input: three bitmap
// words (kept to Table 1, as validation does before the values are looked at), then the
// values.
//
// Invariants: what decodes sets only attributes the mask names; owner strings are views
// inside the values; owner lookups stay within the per-body bound; a refusal says why.
#include "cache/owner_map.hpp"
#include "cache/wcc_body.hpp"
#include "client/attrs.hpp" // the client fattr4 encoder, for the seeds
#include "fuzz_support.hpp"

#include <optional>
#include <string_view>

using namespace flexfiles;
using namespace flexfiles::wcc;

namespace {

constexpr const char* kTarget = "wcc_fattr4";

std::optional<std::uint32_t> stand_in_idmapper(std::string_view name, bool) {
    if (name == "alice@example.org")
        return 1000;
    return std::nullopt;
}

bool has(const Fattr4View& f, std::uint32_t attr) {
    return (f.mask[attr / 32] >> (attr % 32) & 1) != 0;
}

std::uint16_t allowed_bits(const Fattr4View& f) {
    std::uint16_t bits = 0;
    if (has(f, kFattr4Size))
        bits |= kAttrSize;
    if (has(f, kFattr4SpaceUsed))
        bits |= kAttrSpaceUsed;
    if (has(f, kFattr4Mode))
        bits |= kAttrMode;
    if (has(f, kFattr4Owner))
        bits |= kAttrOwner;
    if (has(f, kFattr4OwnerGroup))
        bits |= kAttrGroup;
    if (has(f, kFattr4TimeAccess))
        bits |= kAttrAtime;
    if (has(f, kFattr4TimeModify))
        bits |= kAttrMtime;
    if (has(f, kFattr4TimeMetadata))
        bits |= kAttrCtime;
    return bits;
}

bool inside(std::string_view s, std::span<const std::uint8_t> values) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(s.data());
    return p >= values.data() && p + s.size() <= values.data() + values.size();
}

fuzz::Bytes seed(const client::Fattr& attrs) {
    const client::EncodedFattr enc = client::encode_fattr4(attrs);
    const bitmap4 mask = enc.mask.to_bitmap4();
    fuzz::Bytes b;
    for (std::uint32_t w = 0; w < Fattr4View::kWords; ++w) {
        const std::uint32_t word = w < mask.bitmap4_len ? mask.map[w] : 0;
        for (int s = 24; s >= 0; s -= 8)
            b.push_back(static_cast<std::uint8_t>(word >> s));
    }
    b.insert(b.end(), enc.values.begin(), enc.values.end());
    return b;
}

} // namespace

namespace {

void seeds(fuzz::SeedWriter& w) {
    client::Fattr all;
    all.size = 1 << 20;
    all.space_used = 1 << 20;
    all.mode = 0640;
    all.owner = "1000001";
    all.owner_group = "1000001";
    all.time_access = client::NfsTime{1'800'000'000, 1};
    all.time_modify = client::NfsTime{1'800'000'000, 2};
    all.time_metadata = client::NfsTime{1'800'000'000, 3};
    w.add("table1_numeric", seed(all));
    client::Fattr named = all;
    named.owner = "alice@example.org";
    named.owner_group = std::string(1024, 'g'); // the longest owner string taken
    w.add("table1_named", seed(named));
    client::Fattr bad = all;
    bad.time_modify = client::NfsTime{-5, 999'999'999};
    bad.time_metadata = client::NfsTime{1, 1'000'000'000};
    bad.owner = "";
    w.add("bad_values", seed(bad));
    client::Fattr size;
    size.size = ~0ull;
    w.add("size_only", seed(size));
}

} // namespace

FF_FUZZ_SEEDS(kTarget, seeds)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::Input in(data, size);
    Fattr4View f;
    for (std::uint32_t w = 0; w < Fattr4View::kWords; ++w)
        f.mask[w] = in.u32() & kTable1Mask[w];
    f.values = in.rest();

    Table1Values values;
    std::string why;
    const BodyStatus raw = decode_table1(f, values, why);
    if (raw != BodyStatus::Ok) {
        FUZZ_CHECK(kTarget, !why.empty());
    } else {
        FUZZ_CHECK(kTarget, (values.attrs.valid & ~allowed_bits(f)) == 0);
        FUZZ_CHECK(kTarget, !values.owner || inside(*values.owner, f.values));
        FUZZ_CHECK(kTarget, !values.owner_group || inside(*values.owner_group, f.values));
    }

    OwnerMap owners(stand_in_idmapper);
    DsAttrs out;
    std::string why2;
    const BodyStatus st = table1_decoder(owners)(f, out, why2);
    FUZZ_CHECK(kTarget, st == raw);
    FUZZ_CHECK(kTarget, owners.lookups() <= kMaxOwnerLookupsPerBody);
    if (st == BodyStatus::Ok)
        FUZZ_CHECK(kTarget, (out.valid & ~allowed_bits(f)) == 0);
    return 0;
}
