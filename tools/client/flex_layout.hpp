// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The flexible file layout (RFC 8435) as a client sees it: C++ values for LAYOUTGET's
// ff_layout4, GETDEVICEINFO's ff_device_addr4 with its universal addresses (RFC 5665),
// the ff_layoutreturn4 body of LAYOUTRETURN (I/O errors and statistics), LAYOUTERROR's
// arguments, and the RFC 9766 Table 1 mapping from NFSv3 post-operation attributes to the
// fattr4 a LAYOUT_WCC body carries.
//
// Decoding uses Ganesha's routines (xdr_ff_layout4, xdr_ff_device_addr4) through
// ganesha_xdr.c. Two encoders are written here instead, because Ganesha 4.3's XDR differs
// from the RFCs there:
//   - io_info4 (RFC 7862 section 15.6.1, used by ff_iostats4): Ganesha has a 32-bit
//     ii_count, the RFC and the Linux client a 64-bit one;
//   - LAYOUTERROR4args: the RFC has an array lea_errors<>, Ganesha a single device_error4.
// See tools/README.md for what that means against a Ganesha 4.3 server.
#pragma once

#include "attrs.hpp"
#include "compound.hpp"
#include "layout_wcc.hpp"
#include "nfs3.hpp"
#include "rpc_transport.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace flexfiles::client {

std::string format_deviceid(const DeviceId4& id); // 32 hex digits

// ---- ff_layout4 (RFC 8435 section 5.1). ---------------------------------------------

struct FlexDataServer {
    DeviceId4 deviceid{};
    uint32_t efficiency = 0;
    stateid4 stateid{};                  // ffds_stateid, echoed in LAYOUT_WCC
    std::vector<FileHandle> fh_versions; // ffds_fh_vers (NFSv3: usually one)
    std::string user;                    // ffds_user: the AUTH_SYS uid, as a string
    std::string group;                   // ffds_group

    // The synthetic uid/gid when user/group are plain decimal numbers.
    std::optional<uint32_t> uid() const;
    std::optional<uint32_t> gid() const;
    // AUTH_SYS for I/O to this data file; throws std::invalid_argument when user or group
    // is not numeric (this client has no idmapper for data servers).
    AuthSys credentials() const;
    const FileHandle& fh() const; // the first version; throws if there is none
};

struct FlexMirror {
    std::vector<FlexDataServer> data_servers;
};

struct FlexLayout {
    // From LAYOUTGET4resok and the layout4 segment.
    stateid4 stateid{};
    bool return_on_close = false;
    uint64_t offset = 0;
    uint64_t length = 0;
    uint32_t iomode = 0; // layoutiomode4
    // From ff_layout4.
    uint64_t stripe_unit = 0;
    std::vector<FlexMirror> mirrors;
    uint32_t flags = 0; // ff_flags4 bits (FF_FLAGS_NO_LAYOUTCOMMIT, ...)
    uint32_t stats_collect_hint = 0;

    std::size_t data_server_count() const;
    std::string describe() const; // multi-line, for the CLI
};

// Decodes a loc_body; throws XdrError. Fills the ff_layout4 fields only.
FlexLayout decode_ff_layout4(std::span<const char> body);
// The first LAYOUT4_FLEX_FILES segment of a LAYOUTGET result, decoded; throws XdrError
// when there is none or it does not decode.
FlexLayout decode_layoutget(const LAYOUTGET4resok& ok);

// ---- ff_device_addr4 (RFC 8435 section 4.1) and universal addresses. -------------------

struct UniversalAddress {
    std::string host; // numeric IPv4 or IPv6 address, as written
    uint16_t port = 0;
    bool operator==(const UniversalAddress&) const = default;
};

// RFC 5665 section 5.2.3: "h1.h2.h3.h4.p1.p2" (netid tcp/udp) or "x:...:y.p1.p2" (tcp6,
// udp6); port = p1 * 256 + p2. std::nullopt when malformed or the netid is unknown.
std::optional<UniversalAddress> parse_universal_address(std::string_view netid,
                                                        std::string_view uaddr);
std::string format_universal_address(const std::string& host, uint16_t port);

struct FlexNetAddr {
    std::string netid; // "tcp", "tcp6", ...
    std::string uaddr;
    std::optional<UniversalAddress> address; // parsed, when parseable
};

struct FlexDeviceVersion {
    uint32_t version = 0;
    uint32_t minor_version = 0;
    uint32_t rsize = 0;
    uint32_t wsize = 0;
    bool tightly_coupled = false;
};

struct FlexDeviceAddr {
    std::vector<FlexNetAddr> netaddrs;
    std::vector<FlexDeviceVersion> versions;
    // gdir_notification's first word: the notify_deviceid_type4 bits the server will send
    // for this device (device_notify.hpp); 0 from decode_ff_device_addr4.
    uint32_t notifications = 0;

    // The first NFSv3 entry of ffda_versions; nullptr if none.
    const FlexDeviceVersion* nfs3() const;
    // The first TCP address that parsed; throws std::runtime_error if none.
    UniversalAddress tcp_address() const;
    std::string describe() const;
};

// Decodes a da_addr_body; throws XdrError.
FlexDeviceAddr decode_ff_device_addr4(std::span<const char> body);
// The ff_device_addr4 of a GETDEVICEINFO result; throws XdrError for another layout type.
FlexDeviceAddr decode_getdeviceinfo(const GETDEVICEINFO4resok& ok);

// ---- ff_layoutreturn4 (RFC 8435 section 9). --------------------------------------------

struct FlexIoError { // ff_ioerr4
    uint64_t offset = 0;
    uint64_t length = 0;
    stateid4 stateid{};
    std::vector<DeviceError> errors;
};

struct FlexIoLatency { // ff_io_latency4
    uint64_t ops_requested = 0;
    uint64_t bytes_requested = 0;
    uint64_t ops_completed = 0;
    uint64_t bytes_completed = 0;
    uint64_t bytes_not_delivered = 0;
    NfsTime total_busy_time;
    NfsTime aggregate_completion_time;
};

struct FlexIoStats { // ff_iostats4 with its ff_layoutupdate4
    uint64_t offset = 0;
    uint64_t length = 0;
    stateid4 stateid{};
    uint64_t read_count = 0; // io_info4: 64-bit counts (RFC 7862)
    uint64_t read_bytes = 0;
    uint64_t write_count = 0;
    uint64_t write_bytes = 0;
    DeviceId4 deviceid{};
    std::string netid = "tcp"; // ffl_addr
    std::string uaddr;
    FileHandle fh; // ffl_fhandle
    FlexIoLatency read;
    FlexIoLatency write;
    NfsTime duration;
    bool local = false;
};

struct FlexLayoutReturn {
    std::vector<FlexIoError> ioerr_report;
    std::vector<FlexIoStats> iostats_report;
};

// How io_info4 counts are written: the RFC's 64 bits, or Ganesha 4.3's 32 bits (its
// xdr_io_info4), for talking to a server that decodes with Ganesha's routine.
enum class IoInfoCount { rfc7862_u64, ganesha43_u32 };

// Throws XdrError when a value cannot be encoded.
std::vector<char> encode_ff_layoutreturn4(const FlexLayoutReturn& body,
                                          IoInfoCount counts = IoInfoCount::rfc7862_u64);

// LAYOUTSTATS4args (RFC 7862 section 15.7) for one data file: offset, length, stateid,
// read and write io_info4, the device id, and a layoutupdate4 of type LAYOUT4_FLEX_FILES
// whose body is s's ff_layoutupdate4 (RFC 8435 section 7). Throws XdrError.
std::vector<char> encode_layoutstats_args(const FlexIoStats& s);

// LAYOUTERROR4args (RFC 7862 section 15.6): offset, length, stateid, device_error4<>.
std::vector<char> encode_layouterror_args(uint64_t offset, uint64_t length, const stateid4& stateid,
                                          const std::vector<DeviceError>& errors);

// ---- RFC 9766 Table 1. ----------------------------------------------------------------

// The eight attributes of a data file's NFSv3 post-operation attributes, as LAYOUT_WCC
// carries them: size, space_used, mode (permission bits), owner and owner_group (the
// numeric uid and gid as decimal strings, which Ganesha's idmapper takes with
// Allow_Numeric_Owners, its default), time_access, time_modify and time_metadata (atime,
// mtime, ctime).
Fattr table1_attrs(const nfs3::Fattr& a);

} // namespace flexfiles::client
