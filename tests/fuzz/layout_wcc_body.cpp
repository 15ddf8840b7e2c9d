// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Fuzz target layout_wcc_body: an ff_layout_wcc4 body (RFC 9766 section 3.7) through what
// the FSAL's layout_wcc does with it: read in place (pnfs/xdr/wcc_body_reader.hpp),
// validate and decode the attribute values with owner strings through an OwnerMap (a
// stand-in idmapper that knows two names), match each triple against a fixed two-mirror
// file and apply to an attribute cache, as a READ, READ_WRITE or no layout, trusted or not,
// with or without a stale mirror (the first input byte chooses).
//
// Invariants: the in-place reader and the reference decoder (protocols/'s
// ff_layout_wcc4_decode, Ganesha's XDR routines, flattened by pnfs/xdr/wcc_entries.hpp)
// accept the same bodies and give the same entries; a body that does not decode, or whose
// validation fails, changes nothing in the cache; a body that decodes encodes back to a
// body that decodes to the same entries; owner lookups stay within the per-body bound.
#include "cache/attr_cache.hpp"
#include "cache/owner_map.hpp"
#include "cache/wcc_apply.hpp"
#include "cache/wcc_counters.hpp"
#include "fuzz_support.hpp"
#include "pnfs/xdr/wcc_body_reader.hpp"
#include "pnfs/xdr/wcc_entries.hpp"
#include "wcc_seeds.hpp"

#include <memory>
#include <optional>
#include <string_view>

using namespace flexfiles;
using namespace flexfiles::wcc;

namespace {

constexpr const char* kTarget = "layout_wcc_body";

std::optional<std::uint32_t> stand_in_idmapper(std::string_view name, bool group) {
    if (name == (group ? "staff@example.org" : "alice@example.org"))
        return group ? 50 : 1000;
    return std::nullopt;
}

// What the cache holds for a file, field by field.
std::vector<std::uint64_t> fingerprint(const AttrCache& cache, FileId file) {
    std::vector<std::uint64_t> out;
    for (const DataFileAttrs& d : cache.data_files(file)) {
        const DsAttrs& a = d.attrs;
        out.insert(out.end(),
                   {d.key.slot.mirror, d.key.slot.data_server, a.size, a.space_used,
                    static_cast<std::uint64_t>(a.atime.ns), static_cast<std::uint64_t>(a.mtime.ns),
                    static_cast<std::uint64_t>(a.ctime.ns), a.mode, a.uid, a.gid, a.valid,
                    static_cast<std::uint64_t>(d.source), static_cast<std::uint64_t>(d.learned_ns),
                    d.past_barrier, d.unordered});
    }
    return out;
}

bool same_entries(std::span<const BodyEntry> a, std::span<const BodyEntry> b) {
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const BodyEntry& x = a[i];
        const BodyEntry& y = b[i];
        if (x.mirror_pos != y.mirror_pos || x.ds_pos != y.ds_pos || x.deviceid != y.deviceid ||
            !(x.stateid == y.stateid) || x.fhs.size() != y.fhs.size() ||
            x.attributes.mask != y.attributes.mask ||
            !std::equal(x.attributes.values.begin(), x.attributes.values.end(),
                        y.attributes.values.begin(), y.attributes.values.end()))
            return false;
        for (std::size_t f = 0; f < x.fhs.size(); ++f)
            if (!std::equal(x.fhs[f].begin(), x.fhs[f].end(), y.fhs[f].begin(), y.fhs[f].end()))
                return false;
    }
    return true;
}

// A fresh file id per input (so every input starts from an empty record, as a new file
// does); the cache itself is replaced now and then to bound its size.
struct State {
    std::unique_ptr<AttrCache> cache = std::make_unique<AttrCache>(64);
    RepairTracker repairs;
    WccCounters counters;
    FileId next_file = 1;
};

} // namespace

namespace {

void seeds(fuzz::SeedWriter& w) {
    std::uint8_t mode = 0;
    for (const auto& [name, body] : fuzz::wccseed::bodies())
        w.add(name, mode++, body);
}

} // namespace

FF_FUZZ_SEEDS(kTarget, seeds)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static State state;
    fuzz::Input in(data, size);
    const std::uint8_t mode = in.u8();
    const auto body = in.rest();

    if (state.next_file % 4096 == 0) {
        state.cache = std::make_unique<AttrCache>(64);
    }
    mds::DataFileMap file = fuzz::fixed_file();
    file.file_id = state.next_file++;
    const mds::DataFileMap only_first{file.file_id, file.stripe_unit, {file.files[0]}};

    const std::optional<std::pmr::vector<BodyEntry>> read = read_wcc_body(body);
    DecodedBody decoded;
    const bool reference_ok =
        decoded.decode(reinterpret_cast<const char*>(body.data()), body.size());
    FUZZ_CHECK(kTarget, read.has_value() == reference_ok);
    if (!read)
        return 0; // refused before anything was looked at
    const std::pmr::vector<BodyEntry>& entries = *read;
    FUZZ_CHECK(kTarget, same_entries(entries, entries_of(decoded.body)));

    // Round trip: what decoded encodes back, and that decodes to the same entries.
    {
        std::vector<char> again(LAYOUT_WCC4_BODY_MAX);
        u_int len = 0;
        FUZZ_CHECK(kTarget, ff_layout_wcc4_encode(&decoded.body, again.data(),
                                                  static_cast<u_int>(again.size()), &len));
        DecodedBody redecoded;
        FUZZ_CHECK(kTarget, redecoded.decode(again.data(), len));
        FUZZ_CHECK(kTarget, same_entries(entries, entries_of(redecoded.body)));
    }

    OwnerMap owners(stand_in_idmapper);
    const Validation validated = validate_entries(entries, table1_decoder(owners));
    FUZZ_CHECK(kTarget, owners.lookups() <= kMaxOwnerLookupsPerBody);
    FUZZ_CHECK(kTarget,
               validated.status != BodyStatus::Ok || validated.attrs.size() == entries.size());

    // A record the body may change: mirror 0 as the MDS's own GETATTR saw it.
    DsAttrs known;
    known.size = 100;
    known.valid = kAttrSize;
    state.cache->apply_ds_getattr(DataFileKey{file.file_id, DataFileSlot{0, 0}}, known, 1, 2);
    const auto before = fingerprint(*state.cache, file.file_id);

    const LayoutAuthority authority = static_cast<LayoutAuthority>(mode % 3);
    ApplyPolicy policy;
    policy.trust_wcc = (mode & 0x04) == 0;
    policy.limits.max_ctime = NfsTime{std::int64_t{2'000'000'000} * 1'000'000'000};
    if (mode & 0x08)
        policy.stale_mirrors = {1};
    const mds::DataFileMap* layout = (mode & 0x10) ? &only_first : nullptr;
    const ApplyOutcome out = apply_layout_wcc(*state.cache, file, layout, entries, validated,
                                              authority, policy, state.repairs, state.counters, 3);
    if (out.status != BodyStatus::Ok || validated.status != BodyStatus::Ok)
        FUZZ_CHECK(kTarget, fingerprint(*state.cache, file.file_id) == before);
    if (!policy.trust_wcc || authority == LayoutAuthority::None)
        FUZZ_CHECK(kTarget, out.cache.applied == 0);
    for (const CredentialRepair& r : out.repairs) {
        FUZZ_CHECK(kTarget, r.data_file < file.files.size());
        state.repairs.end(r.key);
    }
    return 0;
}
