// SPDX-License-Identifier: LGPL-3.0-or-later
//
// NFSv3 (RFC 1813) to a flex-files data server, on the library's RpcTransport.
//
// The few messages a flex-files client sends to an NFSv3 data server: NULL, GETATTR,
// READ, WRITE, COMMIT, and MOUNT v3 MNT for an export's root filehandle. Every result
// keeps what the server sent: the nfsstat3 status (NFS3ERR_ACCES after fencing) and the
// post-operation attributes (fattr3) of READ, WRITE and COMMIT replies, which are what
// LAYOUT_WCC (RFC 9766) hands to the MDS.
//
// The XDR routines are rpcgen's, generated at build time from Ganesha's nfs23.x and mount.x
// (see tools/README.md); every message has both directions (the unit tests round-trip
// them and a fake data server answers with them).
//
// Errors: an NFS status is data (`status`), so are RPC failures (`rpc_status`, `error`):
// a write to several mirrors at once reports each mirror's outcome. connect() and mount()
// throw TransportError (compound.hpp) when they cannot connect.
//
// These names live in flexfiles::client::nfs3, apart from the test harness's NFSv3 client
// (flexfiles::harness::Nfs3*), so a test can use both; the values both return are the same
// types (flexfiles::nfs3, model/nfs3.hpp).
#pragma once

#include "compound.hpp"
#include "model/nfs3.hpp"
#include "rpc_transport.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace flexfiles::client::nfs3 {

constexpr uint32_t kProgram = flexfiles::nfs3::kNfsProgram;
constexpr uint32_t kVersion = flexfiles::nfs3::kNfsVersion;
constexpr uint32_t kMountProgram = flexfiles::nfs3::kMountProgram;
constexpr uint32_t kMountVersion = flexfiles::nfs3::kMountVersion;

enum Proc : uint32_t {
    kProcNull = 0,
    kProcGetattr = 1,
    kProcRead = 6,
    kProcWrite = 7,
    kProcCommit = 21,
};
constexpr uint32_t kMountProcMnt = 1;

constexpr uint32_t kFhSizeMax = 64;      // NFS3_FHSIZE
constexpr uint32_t kMaxData = 16u << 20; // largest READ/WRITE payload accepted
constexpr uint32_t kMaxPathLen = 1024;   // MNTPATHLEN
constexpr uint32_t kMaxAuthFlavors = 64;

// The NFSv3 values are core/model's (model/nfs3.hpp), shared with the FSAL and the test
// harness; the client's names for them:
using flexfiles::nfs3::Fattr;        // fattr3, as sent
using flexfiles::nfs3::format_fattr; // "size=.. used=.. mode=0644 uid=.. gid=.. ..."
using flexfiles::nfs3::Ftype;
using flexfiles::nfs3::stable_name;
using flexfiles::nfs3::Status; // nfsstat3; an unknown status is kept as its number
using flexfiles::nfs3::status_name;
using flexfiles::nfs3::Time;
using flexfiles::nfs3::Wcc;
using flexfiles::nfs3::WccAttr;
using Stable = flexfiles::nfs3::StableHow;
using Verifier = flexfiles::nfs3::WriteVerf;

// The NFSv4 status with the same meaning (most share their number; NFS3ERR_JUKEBOX is
// NFS4ERR_DELAY, NFS3ERR_NOT_SYNC NFS4ERR_INVAL...), for LAYOUTERROR / ff_ioerr4 reports.
uint32_t to_nfs4_status(Status s);

// ---- Arguments. ---------------------------------------------------------------------

struct GetattrArgs {
    FileHandle fh;
    bool operator==(const GetattrArgs&) const = default;
};

struct ReadArgs {
    FileHandle fh;
    uint64_t offset = 0;
    uint32_t count = 0;
    bool operator==(const ReadArgs&) const = default;
};

struct WriteArgs {
    FileHandle fh;
    uint64_t offset = 0;
    Stable stable = Stable::file_sync;
    std::vector<char> data; // count is data.size()
    bool operator==(const WriteArgs&) const = default;
};

struct CommitArgs {
    FileHandle fh;
    uint64_t offset = 0;
    uint32_t count = 0; // 0: to the end of the file
    bool operator==(const CommitArgs&) const = default;
};

// ---- Results. -----------------------------------------------------------------------

// What every call result carries besides its procedure's fields.
struct CallOutcome {
    RpcStatus rpc_status = RpcStatus::ok;
    std::string error; // why there is no decoded reply (RPC failure or bad XDR)
    Status status = Status::serverfault;
    std::chrono::microseconds elapsed{0};

    bool replied() const { return rpc_status == RpcStatus::ok && error.empty(); }
    bool ok() const { return replied() && status == Status::ok; }
    // "NFS3_OK", "NFS3ERR_ACCES", "RPC timed out: ...".
    std::string describe() const;
};

struct GetattrResult : CallOutcome {
    std::optional<Fattr> attrs; // when ok
    bool operator==(const GetattrResult& o) const { return status == o.status && attrs == o.attrs; }
};

struct ReadResult : CallOutcome {
    std::optional<Fattr> attrs; // post-op attributes, on success and failure
    uint32_t count = 0;
    bool eof = false;
    std::vector<char> data;
    bool operator==(const ReadResult& o) const {
        return status == o.status && attrs == o.attrs && count == o.count && eof == o.eof &&
               data == o.data;
    }
};

struct WriteResult : CallOutcome {
    Wcc wcc; // on success and failure
    uint32_t count = 0;
    Stable committed = Stable::unstable;
    Verifier verf{};
    bool operator==(const WriteResult& o) const {
        return status == o.status && wcc == o.wcc && count == o.count && committed == o.committed &&
               verf == o.verf;
    }
};

struct CommitResult : CallOutcome {
    Wcc wcc;
    Verifier verf{};
    bool operator==(const CommitResult& o) const {
        return status == o.status && wcc == o.wcc && verf == o.verf;
    }
};

// mountres3.
struct MountResult {
    uint32_t status = 0; // mountstat3: 0 MNT3_OK, 13 ACCES, 2 NOENT, ...
    FileHandle fh;
    std::vector<uint32_t> auth_flavors;
    bool operator==(const MountResult&) const = default;
};

// ---- XDR, both directions. ----------------------------------------------------------
// encode_* throw XdrError if a value cannot be encoded (e.g. a filehandle over 64 bytes);
// decode_* throw XdrError naming what is malformed, truncated or followed by extra bytes.

std::vector<char> encode(const GetattrArgs& a);
std::vector<char> encode(const ReadArgs& a);
std::vector<char> encode(const WriteArgs& a);
std::vector<char> encode(const CommitArgs& a);
std::vector<char> encode_mnt_args(const std::string& dirpath);

GetattrArgs decode_getattr_args(std::span<const char> bytes);
ReadArgs decode_read_args(std::span<const char> bytes);
WriteArgs decode_write_args(std::span<const char> bytes);
CommitArgs decode_commit_args(std::span<const char> bytes);
std::string decode_mnt_args(std::span<const char> bytes);

// Results as a server sends them (status first).
std::vector<char> encode(const GetattrResult& r);
std::vector<char> encode(const ReadResult& r);
std::vector<char> encode(const WriteResult& r);
std::vector<char> encode(const CommitResult& r);
std::vector<char> encode(const MountResult& r);

// Fill the procedure fields and `status` of `out` (not the CallOutcome transport fields).
void decode(std::span<const char> bytes, GetattrResult& out);
void decode(std::span<const char> bytes, ReadResult& out);
void decode(std::span<const char> bytes, WriteResult& out);
void decode(std::span<const char> bytes, CommitResult& out);
MountResult decode_mount_result(std::span<const char> bytes);

// ---- The client. --------------------------------------------------------------------

struct ClientOptions {
    std::string host;
    uint16_t port = 2049;
    std::chrono::milliseconds timeout{10000}; // per call
    std::chrono::milliseconds connect_timeout{5000};
    std::string label;                             // names the server in trace lines
    std::function<void(const std::string&)> trace; // one line per call and reply
};

// One TCP connection to one data server; many calls in flight (matched by XID). Every call
// takes its own AUTH_SYS credentials: the flex-files layout names a uid/gid per data file.
// Safe to use from several threads.
class Client {
public:
    // Throws TransportError when it cannot connect.
    static std::unique_ptr<Client> connect(ClientOptions options);
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    CallOutcome null(const AuthSys& cred);
    GetattrResult getattr(const AuthSys& cred, const FileHandle& fh);
    ReadResult read(const AuthSys& cred, const FileHandle& fh, uint64_t offset, uint32_t count);
    WriteResult write(const AuthSys& cred, const FileHandle& fh, uint64_t offset,
                      std::span<const char> data, Stable stable);
    CommitResult commit(const AuthSys& cred, const FileHandle& fh, uint64_t offset = 0,
                        uint32_t count = 0);

    // The same, returning at once; the result is decoded on the receive thread.
    std::future<GetattrResult> getattr_async(const AuthSys& cred, const FileHandle& fh);
    std::future<ReadResult> read_async(const AuthSys& cred, const FileHandle& fh, uint64_t offset,
                                       uint32_t count);
    std::future<WriteResult> write_async(const AuthSys& cred, const FileHandle& fh, uint64_t offset,
                                         std::span<const char> data, Stable stable);
    std::future<CommitResult> commit_async(const AuthSys& cred, const FileHandle& fh,
                                           uint64_t offset = 0, uint32_t count = 0);

    const ClientOptions& options() const { return options_; }
    RpcTransport& transport() { return *transport_; }
    bool is_open() const { return transport_->is_open(); }

private:
    explicit Client(ClientOptions options);
    template <typename Result>
    std::future<Result> start(uint32_t proc, const AuthSys& cred, std::vector<char> args,
                              std::string what);
    void trace(const std::string& line) const;

    ClientOptions options_;
    std::unique_ptr<RpcTransport> transport_;
};

// MOUNT v3 MNT of `dirpath` at host:mount_port (its own short connection: data servers
// here serve MOUNT on a fixed port of their own). Throws TransportError when it cannot
// connect or gets no reply, NfsError (status = the mountstat3) when the server refuses.
FileHandle mount(const std::string& host, uint16_t mount_port, const std::string& dirpath,
                 const AuthSys& cred = {},
                 std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));

} // namespace flexfiles::client::nfs3
