// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Fuzz target ff_xdr_bodies: the flex-files bodies the FSAL's XDR library decodes
// (fsal_flexfiles/pnfs/xdr/ff_xdr.hpp), chosen by the first input byte:
//   0  ff_layoutreturn4, LAYOUTRETURN's lrf_body from a client: ff_ioerr4 with their
//      device_error4 arrays, ff_iostats4 with io_info4's 64-bit counts (RFC 7862)
//   1  ff_layout4 (a LAYOUTGET body; decoded by tests and tools)
//   2  ff_device_addr4 (a GETDEVICEINFO body), and the universal addresses in it
//
// Invariants: what decodes encodes back and decodes to the same values; LAYOUTRETURN's
// counts are the client's, not cut to fewer bits.
#include "client/flex_layout.hpp"
#include "fuzz_support.hpp"
#include "pnfs/xdr/ff_xdr.hpp"
#include "wcc_seeds.hpp"

#include <cstring>

using namespace flexfiles;
using namespace flexfiles::layout;

namespace {

constexpr const char* kTarget = "ff_xdr_bodies";

bool same(const stateid4& a, const stateid4& b) {
    return a.seqid == b.seqid && std::memcmp(a.other, b.other, sizeof(a.other)) == 0;
}

bool same(const ReturnReport& a, const ReturnReport& b) {
    if (a.errors.size() != b.errors.size() || a.stats.size() != b.stats.size())
        return false;
    for (std::size_t i = 0; i < a.errors.size(); ++i) {
        const IoError& x = a.errors[i];
        const IoError& y = b.errors[i];
        if (x.offset != y.offset || x.length != y.length || !same(x.stateid, y.stateid) ||
            x.deviceid != y.deviceid || x.status != y.status || x.opnum != y.opnum)
            return false;
    }
    for (std::size_t i = 0; i < a.stats.size(); ++i) {
        const IoStats& x = a.stats[i];
        const IoStats& y = b.stats[i];
        if (x.offset != y.offset || x.length != y.length || !same(x.stateid, y.stateid) ||
            x.deviceid != y.deviceid || x.read_ops != y.read_ops || x.read_bytes != y.read_bytes ||
            x.write_ops != y.write_ops || x.write_bytes != y.write_bytes)
            return false;
    }
    return true;
}

bool same(const Layout& a, const Layout& b) {
    if (a.stripe_unit != b.stripe_unit || a.flags != b.flags ||
        a.stats_collect_hint != b.stats_collect_hint || a.mirrors.size() != b.mirrors.size())
        return false;
    for (std::size_t m = 0; m < a.mirrors.size(); ++m) {
        const auto& x = a.mirrors[m].data_servers;
        const auto& y = b.mirrors[m].data_servers;
        if (x.size() != y.size())
            return false;
        for (std::size_t d = 0; d < x.size(); ++d)
            if (x[d].deviceid != y[d].deviceid || x[d].efficiency != y[d].efficiency ||
                !same(x[d].stateid, y[d].stateid) || x[d].fh_vers != y[d].fh_vers ||
                x[d].user != y[d].user || x[d].group != y[d].group)
                return false;
    }
    return true;
}

std::vector<char> encode_with(std::size_t size, const std::function<bool(XDR*)>& fill) {
    std::vector<char> buf(size);
    XDR x;
    xdrmem_create(&x, buf.data(), static_cast<u_int>(buf.size()), XDR_ENCODE);
    const bool ok = fill(&x);
    buf.resize(ok ? xdr_getpos(&x) : 0);
    xdr_destroy(&x);
    FUZZ_CHECK(kTarget, ok);
    return buf;
}

void layoutreturn(std::span<const std::uint8_t> input) {
    if (input.empty())
        return; // Ganesha hands the FSAL no stream for an empty lrf_body
    // Ganesha's stream is over its own (aligned) copy of the opaque: so is this one.
    std::vector<std::uint32_t> aligned((input.size() + 3) / 4);
    std::memcpy(aligned.data(), input.data(), input.size());
    const std::span<const std::uint8_t> bytes{reinterpret_cast<const std::uint8_t*>(aligned.data()),
                                              input.size()};
    XDR x;
    xdrmem_create(&x, const_cast<char*>(reinterpret_cast<const char*>(bytes.data())),
                  static_cast<u_int>(bytes.size()), XDR_DECODE);
    const std::optional<ReturnReport> report = decode_layoutreturn(&x);
    xdr_destroy(&x);
    if (!report)
        return;

    // The counts as sent (the wire struct, decoded again by Ganesha's routine).
    ff_layoutreturn4 wire{};
    xdrmem_create(&x, const_cast<char*>(reinterpret_cast<const char*>(bytes.data())),
                  static_cast<u_int>(bytes.size()), XDR_DECODE);
    FUZZ_CHECK(kTarget, xdr_ff_layoutreturn4(&x, &wire));
    xdr_destroy(&x);
    FUZZ_CHECK(kTarget, wire.fflr_iostats_report.fflr_iostats_report_len == report->stats.size());
    for (std::size_t i = 0; i < report->stats.size(); ++i) {
        const ff_iostats4& s = wire.fflr_iostats_report.fflr_iostats_report_val[i];
        FUZZ_CHECK(kTarget, report->stats[i].read_ops == s.ffis_read.ii_count);
        FUZZ_CHECK(kTarget, report->stats[i].write_ops == s.ffis_write.ii_count);
    }
    xdr_free(reinterpret_cast<xdrproc_t>(xdr_ff_layoutreturn4), &wire);

    const std::vector<char> again =
        encode_with(2 * bytes.size() + 64 * report->errors.size() + 1024,
                    [&](XDR* e) { return encode_layoutreturn(e, *report); });
    xdrmem_create(&x, const_cast<char*>(again.data()), static_cast<u_int>(again.size()),
                  XDR_DECODE);
    const std::optional<ReturnReport> back = decode_layoutreturn(&x);
    xdr_destroy(&x);
    FUZZ_CHECK(kTarget, back && same(*report, *back));
}

void layout_body(std::span<const std::uint8_t> bytes) {
    const std::optional<Layout> layout = decode_layout(bytes.data(), bytes.size());
    if (!layout)
        return;
    const std::vector<char> again =
        encode_with(2 * bytes.size() + 1024, [&](XDR* e) { return encode_layout(e, *layout); });
    const std::optional<Layout> back = decode_layout(again.data(), again.size());
    FUZZ_CHECK(kTarget, back && same(*layout, *back));
}

void device_addr(std::span<const std::uint8_t> bytes) {
    const std::optional<DeviceAddr> dev = decode_device_addr(bytes.data(), bytes.size());
    if (!dev)
        return;
    for (const NetAddr& a : dev->addrs)
        if (const auto hp = parse_universal_address(a.netid, a.uaddr)) {
            // An address that parses was written in a form we can write again.
            FUZZ_CHECK(kTarget, universal_address(hp->ip, hp->port).has_value());
        }
    const std::vector<char> again =
        encode_with(2 * bytes.size() + 1024, [&](XDR* e) { return encode_device_addr(e, *dev); });
    const std::optional<DeviceAddr> back = decode_device_addr(again.data(), again.size());
    FUZZ_CHECK(kTarget, back && *back == *dev);
}

fuzz::Bytes encoded(const std::function<bool(XDR*)>& fill) {
    return fuzz::bytes_of(encode_with(1 << 16, fill));
}

void seeds(fuzz::SeedWriter& w) {
    ReturnReport r;
    IoError e;
    e.offset = 4096;
    e.length = 1 << 20;
    e.deviceid = fleet::make_deviceid(1);
    e.status = NFS4ERR_NXIO;
    e.opnum = NFS4_OP_WRITE;
    r.errors = {e, e};
    IoStats s;
    s.deviceid = fleet::make_deviceid(2);
    s.read_ops = 3;
    s.read_bytes = 12288;
    s.write_ops = 1;
    s.write_bytes = ~0ull;
    r.stats = {s};
    w.add("layoutreturn_errors_and_stats", 0,
          encoded([&](XDR* x) { return encode_layoutreturn(x, r); }));
    w.add("layoutreturn_empty", 0,
          encoded([&](XDR* x) { return encode_layoutreturn(x, ReturnReport{}); }));
    // The client library's ff_layoutreturn4, with a whole ff_layoutupdate4 per iostats.
    client::FlexLayoutReturn c;
    client::FlexIoStats cs;
    cs.read_count = (1ull << 32) + 5; // a count only 64 bits hold
    cs.write_count = 7;
    cs.uaddr = "127.0.0.2.8.1";
    cs.fh.bytes = std::vector<char>(28, 'f');
    c.iostats_report = {cs};
    w.add("layoutreturn_client_64bit_counts", 0,
          fuzz::bytes_of(client::encode_ff_layoutreturn4(c)));

    const Layout layout = layout_of(fuzz::fixed_file(), {1, 2}, 1, 3);
    w.add("layout_two_mirrors", 1, encoded([&](XDR* x) { return encode_layout(x, layout); }));

    DeviceAddr dev;
    dev.addrs = {*universal_address("127.0.0.2", 2049), *universal_address("::1", 20049)};
    dev.versions = {DeviceVersion{3, 0, 1 << 20, 1 << 20, false}};
    w.add("device_v4_v6", 2, encoded([&](XDR* x) { return encode_device_addr(x, dev); }));
}

} // namespace

FF_FUZZ_SEEDS(kTarget, seeds)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::Input in(data, size);
    switch (in.u8() % 3) {
    case 0:
        layoutreturn(in.rest());
        break;
    case 1:
        layout_body(in.rest());
        break;
    default:
        device_addr(in.rest());
        break;
    }
    return 0;
}
