// SPDX-License-Identifier: LGPL-3.0-or-later
//
// NFSv4 COMPOUND: a fluent builder for the request and the decoded reply.
//
//   Compound c;
//   c.walk("/export/dir").getfh().getattr(stat_attrs());
//   CompoundResult r = session.send(c);      // the session adds SEQUENCE first
//   r.check("stat");                         // throws NfsError at the first failed op
//   FileHandle fh = r.fh(c.size() - 2);
//
// Requests are XDR-encoded with Ganesha's nfsv41.h routines; so are the results of every
// operation Ganesha's decoder knows (through ganesha_xdr.h). Statuses off the wire are
// kept as uint32_t (compare them with the nfsstat4 constants). Tests reach past the library with
// raw(): any op number with any argument bytes, e.g. op 76 (answered OP_ILLEGAL) or op 77
// LAYOUT_WCC. Results are per op, as many as the server executed: like the server, the first failed
// op ends the compound, and status_of(i) is empty for the ops after it.
#pragma once

#include "attrs.hpp"
#include "nfs4_xdr.hpp"
#include "rpc_transport.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace flexfiles::client {

// The ONC RPC program of NFSv3 (nfs3.hpp) and NFSv4 (session.hpp) alike.
constexpr uint32_t kNfsProgram = NFS4_PROGRAM;

struct FileHandle {
    std::vector<char> bytes;

    bool empty() const { return bytes.empty(); }
    std::string hex() const;
    bool operator==(const FileHandle&) const = default;
};

// RFC 9766 LAYOUT_WCC. A stock nfsv41.h has no NFS4_OP_LAYOUT_WCC; the number is fixed.
constexpr uint32_t kOpLayoutWcc = 77;

// A pNFS device id (deviceid4).
using DeviceId4 = std::array<char, NFS4_DEVICEID4_SIZE>;

struct FlexIoStats; // flex_layout.hpp: ff_iostats4, also LAYOUTSTATS's body

// device_error4 (RFC 7862 section 15.6): what LAYOUTERROR and ff_ioerr4 report.
struct DeviceError {
    DeviceId4 deviceid{};
    uint32_t status = NFS4_OK; // nfsstat4 the data server's error maps to
    uint32_t opnum = 0;        // the NFSv4 op the I/O corresponds to (OP_READ, OP_WRITE...)
};

// LAYOUTGET4args (RFC 8881 section 18.43). The defaults ask for a flex-files layout of the
// whole file.
struct LayoutGetArgs {
    uint32_t layout_type = LAYOUT4_FLEX_FILES;
    uint32_t iomode = LAYOUTIOMODE4_RW; // layoutiomode4
    uint64_t offset = 0;
    uint64_t length = NFS4_UINT64_MAX;
    uint64_t minlength = 0;
    stateid4 stateid{}; // the open stateid first, the layout stateid after
    uint32_t maxcount = 64u << 10;
    bool signal_layout_avail = false;
};

// LAYOUTCOMMIT4args (section 18.42); a flex-files layoutupdate4 has an empty body.
struct LayoutCommitArgs {
    uint64_t offset = 0;
    uint64_t length = NFS4_UINT64_MAX;
    bool reclaim = false;
    stateid4 stateid{};                        // the layout stateid
    std::optional<uint64_t> last_write_offset; // loca_last_write_offset
    std::optional<nfstime4> time_modify;       // loca_time_modify
    uint32_t layout_type = LAYOUT4_FLEX_FILES;
    std::vector<char> layoutupdate; // lou_body
};

// LAYOUTRETURN4args (section 18.44). FILE returns [offset, offset+length) of the current
// filehandle with `body` as lrf_body (an ff_layoutreturn4 for flex files); FSID and ALL
// carry nothing else.
struct LayoutReturnArgs {
    bool reclaim = false;
    uint32_t layout_type = LAYOUT4_FLEX_FILES;
    uint32_t iomode = LAYOUTIOMODE4_ANY;
    uint32_t return_type = LAYOUTRETURN4_FILE; // layoutreturn_type4
    uint64_t offset = 0;
    uint64_t length = NFS4_UINT64_MAX;
    stateid4 stateid{};
    std::vector<char> body;
};

// The special stateids of RFC 8881 section 8.2.3.
stateid4 anonymous_stateid();                  // all zeros
stateid4 current_stateid();                    // seqid 1, other zeros
std::string format_stateid(const stateid4& s); // "seqid:other-hex"

// An operation failed (status != NFS4_OK), or was missing from the reply.
class NfsError : public std::runtime_error {
public:
    NfsError(uint32_t status, uint32_t opnum, const std::string& what);
    uint32_t status() const { return status_; } // an nfsstat4 value
    uint32_t opnum() const { return opnum_; }

private:
    uint32_t status_;
    uint32_t opnum_;
};

// The compound never got a decodable reply (timeout, lost connection, RPC error, bad XDR).
class TransportError : public std::runtime_error {
public:
    TransportError(RpcStatus status, const std::string& what)
        : std::runtime_error(what), status_(status) {}
    RpcStatus status() const { return status_; }

private:
    RpcStatus status_;
};

struct OpenArgs {
    std::string name;      // CLAIM_NULL: a name in the current (directory) fh
    bool claim_fh = false; // CLAIM_FH: open the current fh itself (name unused)
    uint32_t share_access = OPEN4_SHARE_ACCESS_READ;
    uint32_t share_deny = OPEN4_SHARE_DENY_NONE;
    bool create = false;
    createmode4 create_mode = UNCHECKED4;            // UNCHECKED4, GUARDED4 or EXCLUSIVE4_1
    Fattr create_attrs;                              // e.g. mode; unused for a plain open
    std::array<char, NFS4_VERIFIER_SIZE> verifier{}; // EXCLUSIVE4_1
    clientid4 clientid = 0;                          // open-owner (the server uses the session's)
    std::string owner = "ff-client";                 // open-owner bytes
};

class Compound {
public:
    explicit Compound(std::string tag = {});
    Compound(Compound&&) noexcept = default;
    Compound& operator=(Compound&&) noexcept = default;
    Compound(const Compound&) = delete;
    Compound& operator=(const Compound&) = delete;

    // ---- How the session sends it. ----
    // Send without the SEQUENCE the session puts first (session-less ops, or tests that
    // place their own SEQUENCE or want NFS4ERR_OP_NOT_IN_SESSION).
    Compound& no_sequence();
    Compound& retry_on_delay(bool on); // default on: resend after NFS4ERR_DELAY
    Compound& cache_this(bool on);     // SEQUENCE sa_cachethis
    Compound& set_tag(std::string tag);
    // Send with this COMPOUND minorversion instead of the session's (it is what makes
    // op 77 legal (2) or OP_ILLEGAL (1)); the SEQUENCE still uses the session.
    Compound& minor_version(uint32_t minor);

    // ---- Filehandle and attribute ops. ----
    Compound& putrootfh();
    Compound& putpubfh();
    Compound& putfh(const FileHandle& fh);
    Compound& getfh();
    Compound& savefh();
    Compound& restorefh();
    Compound& lookup(std::string_view name);
    Compound& lookupp();
    Compound& remove(std::string_view name); // in the current filehandle (a directory)
    // PUTROOTFH, then one LOOKUP per component of `path` ("/a/b", "a/b" and "/" work).
    Compound& walk(std::string_view path);
    Compound& getattr(const AttrMask& attrs);
    Compound& setattr(const stateid4& stateid, const Fattr& attrs);

    // ---- State and I/O through the MDS. ----
    Compound& open(const OpenArgs& args);
    Compound& close(const stateid4& open_stateid);
    Compound& read(const stateid4& stateid, uint64_t offset, uint32_t count);
    Compound& write(const stateid4& stateid, uint64_t offset, std::span<const char> data,
                    stable_how4 stable = FILE_SYNC4);
    Compound& commit(uint64_t offset, uint32_t count);
    // RFC 8881 section 18.48: whether each stateid is valid for this session's client.
    Compound& test_stateid(std::span<const stateid4> stateids);

    // ---- Session ops (the Session uses these; public for tests). ----
    Compound& sequence(const SEQUENCE4args& args);
    Compound& reclaim_complete(bool one_fs = false);
    Compound& destroy_session(const sessionid4& id);
    Compound& destroy_clientid(clientid4 id);
    Compound& bind_conn_to_session(const sessionid4& id, channel_dir_from_client4 dir);

    // ---- pNFS ops. ----
    // Op 77 (RFC 9766), legal only in a minor version 2 COMPOUND. `body` is the
    // layout-type-specific lowa_body (encode_flex_layout_wcc() in layout_wcc.hpp).
    // Encoded by nfs4_layout_wcc_xdr.h's xdr_LAYOUT_WCC4args; defined in layout_wcc.cpp.
    Compound& layout_wcc(const stateid4& layout_stateid, uint32_t layout_type,
                         std::span<const char> body);
    // pnfs_ops.cpp. Encoded with Ganesha's xdr_nfs_argop4, except LAYOUTERROR.
    Compound& layoutget(const LayoutGetArgs& args);
    // `notify_types`: bitmap of notify_deviceid_type4 bits (0: none).
    Compound& getdeviceinfo(const DeviceId4& device, uint32_t layout_type = LAYOUT4_FLEX_FILES,
                            uint32_t maxcount = 4096, uint32_t notify_types = 0);
    // One page of at most `maxdevices` deviceids from `cookie` (0: the start; otherwise
    // with the gdlr_cookieverf of the page before).
    Compound& getdevicelist(uint32_t layout_type, uint32_t maxdevices, uint64_t cookie = 0,
                            const std::array<char, NFS4_VERIFIER_SIZE>& cookieverf = {});
    Compound& layoutcommit(const LayoutCommitArgs& args);
    Compound& layoutreturn(const LayoutReturnArgs& args);
    // Op 64 with the RFC 7862 arguments (lea_errors is an array), sent as a raw op because
    // stock Ganesha 4.3's XDR has a single device_error4 there (the series' 0009 fixes
    // it). A stock 4.3 server therefore reads 4 bytes fewer than sent: make LAYOUTERROR
    // the last op of its compound there.
    Compound& layouterror(uint64_t offset, uint64_t length, const stateid4& stateid,
                          const std::vector<DeviceError>& errors);
    // Op 65 with the RFC 7862 arguments (with lsa_deviceid, which stock Ganesha 4.3's XDR
    // lacks; the series' 0011 adds it), sent as a raw op for the same reason.
    Compound& layoutstats(const FlexIoStats& stats);

    // ---- Escape hatches. ----
    // A typed op encoded by Ganesha's xdr_nfs_argop4. Memory it points to must outlive
    // the send; keep() copies bytes into this compound for that.
    Compound& typed(const nfs_argop4& op, std::string label = {});
    // Any op number followed by `xdr_args` exactly as given (no padding added).
    Compound& raw(uint32_t opnum, std::span<const char> xdr_args = {}, std::string label = {});
    char* keep(std::span<const char> bytes);

    // ---- Inspection and encoding. ----
    std::size_t size() const { return ops_.size(); }
    uint32_t opnum(std::size_t i) const { return ops_.at(i).opnum; }
    const std::string& label(std::size_t i) const { return ops_.at(i).label; }
    const std::string& tag() const { return tag_; }
    bool uses_sequence() const { return sequence_; }
    bool retries_on_delay() const { return retry_delay_; }
    bool caches() const { return cache_this_; }
    std::optional<uint32_t> minor_override() const { return minor_; }

    // COMPOUND4args with `first` (the session's SEQUENCE) before this compound's ops.
    std::vector<char> encode(uint32_t minorversion, const nfs_argop4* first = nullptr) const;
    // "PUTROOTFH | LOOKUP \"export\" | GETATTR {size}" (`first_label` prepended if given).
    std::string describe(const std::string& first_label = {}) const;

private:
    struct Op {
        uint32_t opnum = 0;
        bool is_raw = false;
        nfs_argop4 args{};
        std::span<const char> raw_args;
        std::string label;
    };
    Compound& add(nfs_argop4 op, std::string label);
    // raw(), taking the encoded arguments instead of copying them.
    Compound& add_raw(uint32_t opnum, std::vector<char>&& xdr_args, std::string label);
    char* keep_string(std::string_view s);

    std::vector<Op> ops_;
    std::deque<std::vector<char>> storage_; // what ops_ point into; never relocated
    std::size_t payload_bytes_ = 0;
    std::string tag_;
    bool sequence_ = true;
    bool retry_delay_ = true;
    bool cache_this_ = false;
    std::optional<uint32_t> minor_;
};

struct OpResult {
    uint32_t opnum = 0;        // as the server returned it (10044 for OP_ILLEGAL)
    uint32_t status = NFS4_OK; // an nfsstat4 value
    bool typed = false;        // `res` holds the result decoded by xdr_nfs_resop4
    nfs_resop4 res{};
    std::size_t body_offset = 0; // the result's bytes after the opnum (status first)
    std::size_t body_size = 0;   //   within CompoundResult::record
};

class CompoundResult {
public:
    CompoundResult() = default;
    ~CompoundResult();
    CompoundResult(CompoundResult&& other) noexcept;
    CompoundResult& operator=(CompoundResult&& other) noexcept;
    CompoundResult(const CompoundResult&) = delete;
    CompoundResult& operator=(const CompoundResult&) = delete;

    RpcStatus rpc_status = RpcStatus::ok;
    std::string error;         // why there is no (complete) decoded reply; empty if fine
    uint32_t status = NFS4_OK; // COMPOUND4res status (an nfsstat4 value)
    std::string tag;
    std::size_t ops_sent = 0;         // ops of the Compound (the session's SEQUENCE not counted)
    std::optional<OpResult> sequence; // the session's SEQUENCE, when it sent one
    std::vector<OpResult> ops;        // results for the Compound's ops, in order
    std::vector<char> record;         // the RPC reply record
    std::chrono::microseconds elapsed{0};
    int attempts = 0; // sends, counting NFS4ERR_DELAY retries

    // A decoded reply whose compound status is NFS4_OK.
    bool ok() const { return replied() && status == NFS4_OK; }
    // The server answered and the reply decoded (whatever the NFS status).
    bool replied() const { return rpc_status == RpcStatus::ok && error.empty(); }

    // Status of the i-th op of the Compound; empty if the server did not execute it.
    std::optional<uint32_t> status_of(std::size_t i) const;
    const OpResult& op(std::size_t i) const; // throws NfsError if not executed
    std::span<const char> raw_result(std::size_t i) const;

    // Throws TransportError if !replied(), NfsError at the first failed op otherwise.
    void check(std::string_view what) const;

    // Typed results; each throws NfsError unless op i executed, succeeded and is that op.
    FileHandle fh(std::size_t i) const;    // GETFH
    Fattr attrs(std::size_t i) const;      // GETATTR (throws XdrError on bad fattr4)
    stateid4 stateid(std::size_t i) const; // OPEN, CLOSE
    const OPEN4resok& open(std::size_t i) const;
    const READ4resok& read(std::size_t i) const;
    const WRITE4resok& write(std::size_t i) const;
    const COMMIT4resok& commit(std::size_t i) const;
    std::vector<uint32_t> test_stateid(std::size_t i) const; // each stateid's status
    const SEQUENCE4resok& sequence_ok() const;
    // pNFS results (pnfs_ops.cpp); flex_layout.hpp decodes their bodies.
    const LAYOUTGET4resok& layoutget(std::size_t i) const;
    const GETDEVICEINFO4resok& getdeviceinfo(std::size_t i) const;
    const GETDEVICELIST4resok& getdevicelist(std::size_t i) const;
    // gdir_mincount of a GETDEVICEINFO that failed with NFS4ERR_TOOSMALL; empty otherwise.
    std::optional<uint32_t> getdeviceinfo_mincount(std::size_t i) const;
    // locr_newsize: the new size when the server says it changed.
    std::optional<uint64_t> layoutcommit_newsize(std::size_t i) const;
    // lorr_stateid: present while the client still holds some layout of the file.
    std::optional<stateid4> layoutreturn_stateid(std::size_t i) const;

    // "NFS4_OK: SEQUENCE NFS4_OK | PUTROOTFH NFS4_OK | ..." (and any error).
    std::string describe() const;

private:
    const OpResult& expect(std::size_t i, uint32_t opnum) const;
    void release();
};

// Decodes COMPOUND4res from `record` (results start at `body_offset`).
// Never throws for bad input: problems land in CompoundResult::error.
CompoundResult decode_compound_reply(std::vector<char>&& record, std::size_t body_offset);

} // namespace flexfiles::client
