// SPDX-License-Identifier: LGPL-3.0-or-later
#include "pnfs/xdr/ff_xdr.hpp"

#include "model/enum_bits.hpp"

#include <arpa/inet.h>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

namespace flexfiles::layout {

namespace {

// xdrmem_ncreate() aborts on a buffer that is not 4-byte aligned: such bytes are copied.
class AlignedBytes {
public:
    AlignedBytes(const void* body, std::size_t len) : body_(body) {
        if (reinterpret_cast<std::uintptr_t>(body) % 4 != 0) {
            copy_.resize((len + 3) / 4 + 1); // never empty: data() is not NULL
            std::memcpy(copy_.data(), body, len);
            body_ = copy_.data();
        }
    }
    const void* data() const { return body_; }

private:
    const void* body_;
    std::vector<std::uint32_t> copy_;
};

// Decodes all `len` bytes of `body` as one Wire with `proc` and returns what `convert`
// makes of it; nullopt when they are not exactly one Wire. What the decoder allocated is
// freed on every path, a throwing `convert` included.
template <class Wire, class Convert>
auto decode_whole(const void* body, std::size_t len, bool (*proc)(XDR*, Wire*), Convert convert)
    -> std::optional<decltype(convert(std::declval<const Wire&>()))> {
    // No bytes decode as any of ours (each starts with a count); and no XDR stream over NULL.
    if (body == nullptr)
        return std::nullopt;
    const AlignedBytes aligned(body, len);
    XDR xdrs;
    xdrmem_create(&xdrs, static_cast<char*>(const_cast<void*>(aligned.data())),
                  static_cast<u_int>(len), XDR_DECODE);
    Wire wire{};
    const bool ok = proc(&xdrs, &wire) && xdr_getpos(&xdrs) == len;
    xdr_destroy(&xdrs);
    struct Freed {
        bool (*proc)(XDR*, Wire*);
        Wire* wire;
        ~Freed() { xdr_free(reinterpret_cast<xdrproc_t>(proc), wire); }
    } freed{proc, &wire};
    if (!ok)
        return std::nullopt;
    return convert(wire);
}

} // namespace

// ---------------------------------------------------------------------------
// Universal addresses

namespace {

std::string port_suffix(std::uint16_t port) {
    return "." + std::to_string(port >> 8) + "." + std::to_string(port & 0xff);
}

// "0".."255" without sign or leading zeros beyond a lone "0".
std::optional<std::uint32_t> parse_octet(std::string_view s) {
    if (s.empty() || s.size() > 3 || (s.size() > 1 && s[0] == '0'))
        return std::nullopt;
    std::uint32_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || v > 255)
        return std::nullopt;
    return v;
}

} // namespace

std::optional<NetAddr> universal_address(std::string_view ip, std::uint16_t port) {
    std::string text(ip);
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']')
        text = text.substr(1, text.size() - 2);
    if (text.empty() || text.find('%') != std::string::npos) // no zone ids
        return std::nullopt;

    in_addr v4{};
    if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
        char buf[INET_ADDRSTRLEN];
        if (inet_ntop(AF_INET, &v4, buf, sizeof(buf)) == nullptr)
            return std::nullopt;
        return NetAddr{"tcp", std::string(buf) + port_suffix(port)};
    }
    in6_addr v6{};
    if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
        char buf[INET6_ADDRSTRLEN];
        if (inet_ntop(AF_INET6, &v6, buf, sizeof(buf)) == nullptr)
            return std::nullopt;
        return NetAddr{"tcp6", std::string(buf) + port_suffix(port)};
    }
    return std::nullopt;
}

std::optional<HostPort> parse_universal_address(std::string_view netid, std::string_view uaddr) {
    const auto last = uaddr.rfind('.');
    if (last == std::string_view::npos || last == 0)
        return std::nullopt;
    const auto second = uaddr.rfind('.', last - 1);
    if (second == std::string_view::npos || second == 0)
        return std::nullopt;
    const auto hi = parse_octet(uaddr.substr(second + 1, last - second - 1));
    const auto lo = parse_octet(uaddr.substr(last + 1));
    if (!hi || !lo)
        return std::nullopt;
    std::string ip(uaddr.substr(0, second));

    int family = 0;
    if (netid == "tcp")
        family = AF_INET;
    else if (netid == "tcp6")
        family = AF_INET6;
    else
        return std::nullopt;
    unsigned char bytes[sizeof(in6_addr)];
    if (inet_pton(family, ip.c_str(), bytes) != 1)
        return std::nullopt;
    return HostPort{std::move(ip), static_cast<std::uint16_t>(*hi << 8 | *lo)};
}

// ---------------------------------------------------------------------------
// ff_device_addr4

bool encode_device_addr(XDR* xdrs, const DeviceAddr& dev) {
    std::vector<std::string> strings; // NUL-terminated copies for xdr_string
    strings.reserve(dev.addrs.size() * 2);
    std::vector<netaddr4> addrs(dev.addrs.size());
    for (std::size_t i = 0; i < dev.addrs.size(); i++) {
        strings.push_back(dev.addrs[i].netid);
        addrs[i].r_netid = strings.back().data();
        strings.push_back(dev.addrs[i].uaddr);
        addrs[i].r_addr = strings.back().data();
    }
    std::vector<ff_device_versions4> versions(dev.versions.size());
    for (std::size_t i = 0; i < dev.versions.size(); i++) {
        versions[i].ffdv_version = dev.versions[i].version;
        versions[i].ffdv_minorversion = dev.versions[i].minor_version;
        versions[i].ffdv_rsize = dev.versions[i].rsize;
        versions[i].ffdv_wsize = dev.versions[i].wsize;
        versions[i].ffdv_tightly_coupled = dev.versions[i].tightly_coupled;
    }
    ff_device_addr4 wire{};
    wire.ffda_netaddrs.multipath_list4_len = static_cast<u_int>(addrs.size());
    wire.ffda_netaddrs.multipath_list4_val = addrs.data();
    wire.ffda_versions.ffda_versions_len = static_cast<u_int>(versions.size());
    wire.ffda_versions.ffda_versions_val = versions.data();
    return xdr_ff_device_addr4(xdrs, &wire);
}

std::optional<DeviceAddr> decode_device_addr(const void* body, std::size_t len) {
    return decode_whole(body, len, xdr_ff_device_addr4, [](const ff_device_addr4& wire) {
        DeviceAddr out;
        for (u_int i = 0; i < wire.ffda_netaddrs.multipath_list4_len; i++) {
            const netaddr4& a = wire.ffda_netaddrs.multipath_list4_val[i];
            out.addrs.push_back(
                {a.r_netid != nullptr ? a.r_netid : "", a.r_addr != nullptr ? a.r_addr : ""});
        }
        for (u_int i = 0; i < wire.ffda_versions.ffda_versions_len; i++) {
            const ff_device_versions4& v = wire.ffda_versions.ffda_versions_val[i];
            out.versions.push_back({v.ffdv_version, v.ffdv_minorversion, v.ffdv_rsize, v.ffdv_wsize,
                                    v.ffdv_tightly_coupled != 0});
        }
        return out;
    });
}

// ---------------------------------------------------------------------------
// ff_layout4

Layout layout_of(const mds::DataFileMap& map, const std::vector<std::uint32_t>& efficiency,
                 std::uint32_t flags, std::uint32_t stats_collect_hint) {
    Layout out;
    out.stripe_unit = map.stripe_unit;
    out.flags = flags;
    out.stats_collect_hint = stats_collect_hint;
    out.mirrors.reserve(map.files.size());
    for (std::size_t i = 0; i < map.files.size(); i++) {
        const mds::DataFile& f = map.files[i];
        LayoutDataServer ds;
        ds.deviceid = f.deviceid;
        ds.efficiency = i < efficiency.size() ? efficiency[i] : 0;
        ds.fh_vers.push_back(f.fh.to_vector());
        ds.user = std::to_string(f.fencing_uid);
        ds.group = std::to_string(f.fencing_gid);
        out.mirrors.push_back(LayoutMirror{{std::move(ds)}});
    }
    return out;
}

bool encode_layout(XDR* xdrs, const Layout& layout) {
    // The wire structs point into `layout`; xdr_ff_layout4 only reads them when encoding.
    std::vector<ff_mirror4> mirrors(layout.mirrors.size());
    std::vector<std::vector<ff_data_server4>> servers(layout.mirrors.size());
    std::vector<std::vector<nfs_fh4>> fhs;
    for (std::size_t m = 0; m < layout.mirrors.size(); m++) {
        const auto& src = layout.mirrors[m].data_servers;
        servers[m].resize(src.size());
        for (std::size_t d = 0; d < src.size(); d++) {
            const LayoutDataServer& s = src[d];
            ff_data_server4& w = servers[m][d];
            std::memcpy(w.ffds_deviceid, s.deviceid.data(), NFS4_DEVICEID4_SIZE);
            w.ffds_efficiency = s.efficiency;
            w.ffds_stateid = s.stateid;
            auto& list = fhs.emplace_back(s.fh_vers.size());
            for (std::size_t f = 0; f < s.fh_vers.size(); f++) {
                list[f].nfs_fh4_len = static_cast<u_int>(s.fh_vers[f].size());
                list[f].nfs_fh4_val =
                    reinterpret_cast<char*>(const_cast<std::uint8_t*>(s.fh_vers[f].data()));
            }
            w.ffds_fh_vers.ffds_fh_vers_len = static_cast<u_int>(list.size());
            w.ffds_fh_vers.ffds_fh_vers_val = list.data();
            w.ffds_user.utf8string_len = static_cast<u_int>(s.user.size());
            w.ffds_user.utf8string_val = const_cast<char*>(s.user.data());
            w.ffds_group.utf8string_len = static_cast<u_int>(s.group.size());
            w.ffds_group.utf8string_val = const_cast<char*>(s.group.data());
        }
        mirrors[m].ffm_data_servers.ffm_data_servers_len = static_cast<u_int>(src.size());
        mirrors[m].ffm_data_servers.ffm_data_servers_val = servers[m].data();
    }
    ff_layout4 wire{};
    wire.ffl_stripe_unit = layout.stripe_unit;
    wire.ffl_mirrors.ffl_mirrors_len = static_cast<u_int>(mirrors.size());
    wire.ffl_mirrors.ffl_mirrors_val = mirrors.data();
    set_enum_bits(wire.ffl_flags, layout.flags); // a set of ff_flags4 bits
    wire.ffl_stats_collect_hint = layout.stats_collect_hint;
    return xdr_ff_layout4(xdrs, &wire);
}

std::optional<Layout> decode_layout(const void* body, std::size_t len) {
    return decode_whole(body, len, xdr_ff_layout4, [](const ff_layout4& wire) {
        Layout out;
        out.stripe_unit = wire.ffl_stripe_unit;
        out.flags = enum_bits(wire.ffl_flags);
        out.stats_collect_hint = wire.ffl_stats_collect_hint;
        for (u_int m = 0; m < wire.ffl_mirrors.ffl_mirrors_len; m++) {
            const ff_mirror4& wm = wire.ffl_mirrors.ffl_mirrors_val[m];
            LayoutMirror mirror;
            for (u_int d = 0; d < wm.ffm_data_servers.ffm_data_servers_len; d++) {
                const ff_data_server4& w = wm.ffm_data_servers.ffm_data_servers_val[d];
                LayoutDataServer s;
                std::memcpy(s.deviceid.data(), w.ffds_deviceid, NFS4_DEVICEID4_SIZE);
                s.efficiency = w.ffds_efficiency;
                s.stateid = w.ffds_stateid;
                for (u_int f = 0; f < w.ffds_fh_vers.ffds_fh_vers_len; f++) {
                    const nfs_fh4& fh = w.ffds_fh_vers.ffds_fh_vers_val[f];
                    const auto* p = reinterpret_cast<const std::uint8_t*>(fh.nfs_fh4_val);
                    s.fh_vers.emplace_back(p, p + fh.nfs_fh4_len);
                }
                s.user.assign(w.ffds_user.utf8string_val, w.ffds_user.utf8string_len);
                s.group.assign(w.ffds_group.utf8string_val, w.ffds_group.utf8string_len);
                mirror.data_servers.push_back(std::move(s));
            }
            out.mirrors.push_back(std::move(mirror));
        }
        return out;
    });
}

std::optional<std::uint32_t> parse_numeric_owner(std::string_view owner) {
    if (owner.empty() || owner.size() > 10)
        return std::nullopt;
    std::uint32_t v = 0;
    auto [end, ec] = std::from_chars(owner.data(), owner.data() + owner.size(), v);
    if (ec != std::errc{} || end != owner.data() + owner.size())
        return std::nullopt;
    return v;
}

// ---------------------------------------------------------------------------
// ff_layoutreturn4

std::optional<ReturnReport> decode_layoutreturn(XDR* xdrs) {
    if (xdrs == nullptr)
        return std::nullopt;
    ff_layoutreturn4 wire{};
    std::optional<ReturnReport> out;
    if (xdr_ff_layoutreturn4(xdrs, &wire)) {
        out.emplace();
        for (u_int i = 0; i < wire.fflr_ioerr_report.fflr_ioerr_report_len; i++) {
            const ff_ioerr4& e = wire.fflr_ioerr_report.fflr_ioerr_report_val[i];
            for (u_int j = 0; j < e.ffie_errors.ffie_errors_len; j++) {
                const device_error4& d = e.ffie_errors.ffie_errors_val[j];
                IoError err;
                err.offset = e.ffie_offset;
                err.length = e.ffie_length;
                err.stateid = e.ffie_stateid;
                std::memcpy(err.deviceid.data(), d.de_deviceid, NFS4_DEVICEID4_SIZE);
                err.status = enum_bits(d.de_status);
                err.opnum = enum_bits(d.de_opnum);
                out->errors.push_back(err);
            }
        }
        for (u_int i = 0; i < wire.fflr_iostats_report.fflr_iostats_report_len; i++) {
            const ff_iostats4& s = wire.fflr_iostats_report.fflr_iostats_report_val[i];
            IoStats st;
            st.offset = s.ffis_offset;
            st.length = s.ffis_length;
            st.stateid = s.ffis_stateid;
            std::memcpy(st.deviceid.data(), s.ffis_deviceid, NFS4_DEVICEID4_SIZE);
            st.read_ops = s.ffis_read.ii_count;
            st.read_bytes = s.ffis_read.ii_bytes;
            st.write_ops = s.ffis_write.ii_count;
            st.write_bytes = s.ffis_write.ii_bytes;
            out->stats.push_back(st);
        }
    }
    xdr_free(reinterpret_cast<xdrproc_t>(xdr_ff_layoutreturn4), &wire);
    return out;
}

bool encode_layoutreturn(XDR* xdrs, const ReturnReport& report) {
    std::vector<device_error4> errors(report.errors.size());
    std::vector<ff_ioerr4> ioerrs(report.errors.size());
    for (std::size_t i = 0; i < report.errors.size(); i++) {
        const IoError& e = report.errors[i];
        std::memcpy(errors[i].de_deviceid, e.deviceid.data(), NFS4_DEVICEID4_SIZE);
        set_enum_bits(errors[i].de_status, e.status);
        set_enum_bits(errors[i].de_opnum, e.opnum);
        ioerrs[i].ffie_offset = e.offset;
        ioerrs[i].ffie_length = e.length;
        ioerrs[i].ffie_stateid = e.stateid;
        ioerrs[i].ffie_errors.ffie_errors_len = 1;
        ioerrs[i].ffie_errors.ffie_errors_val = &errors[i];
    }
    // ff_layoutupdate4 inside ff_iostats4 carries a netaddr4 whose strings must be valid.
    char empty[] = "";
    std::vector<ff_iostats4> stats(report.stats.size());
    for (std::size_t i = 0; i < report.stats.size(); i++) {
        const IoStats& s = report.stats[i];
        ff_iostats4& w = stats[i];
        w.ffis_offset = s.offset;
        w.ffis_length = s.length;
        w.ffis_stateid = s.stateid;
        w.ffis_read.ii_count = s.read_ops;
        w.ffis_read.ii_bytes = s.read_bytes;
        w.ffis_write.ii_count = s.write_ops;
        w.ffis_write.ii_bytes = s.write_bytes;
        std::memcpy(w.ffis_deviceid, s.deviceid.data(), NFS4_DEVICEID4_SIZE);
        w.ffis_layoutupdate.ffl_addr.r_netid = empty;
        w.ffis_layoutupdate.ffl_addr.r_addr = empty;
    }
    ff_layoutreturn4 wire{};
    wire.fflr_ioerr_report.fflr_ioerr_report_len = static_cast<u_int>(ioerrs.size());
    wire.fflr_ioerr_report.fflr_ioerr_report_val = ioerrs.data();
    wire.fflr_iostats_report.fflr_iostats_report_len = static_cast<u_int>(stats.size());
    wire.fflr_iostats_report.fflr_iostats_report_val = stats.data();
    return xdr_ff_layoutreturn4(xdrs, &wire);
}

} // namespace flexfiles::layout
