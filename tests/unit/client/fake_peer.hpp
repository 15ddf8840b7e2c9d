// SPDX-License-Identifier: LGPL-3.0-or-later
// A fake RPC peer over loopback TCP for the client tests: a listening socket, record
// marking both ways, RPC call and reply headers built and parsed by hand.
#pragma once

#include "client/xdr_stream.hpp"

#include <arpa/inet.h>
#include <cstdint>
#include <cstring>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace fake_peer {

using flexfiles::client::xdr_encode;
using flexfiles::client::xdr_put_opaque;
using flexfiles::client::xdr_put_u32;
using flexfiles::client::XdrDecoder;

// A listening socket on 127.0.0.1 with a kernel-chosen port.
struct Listener {
    int fd = -1;
    uint16_t port = 0;
    Listener() {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
        listen(fd, 8);
        socklen_t sl = sizeof sa;
        getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &sl);
        port = ntohs(sa.sin_port);
    }
    ~Listener() { ::close(fd); }
    int accept_one() const { return ::accept(fd, nullptr, nullptr); }
};

inline void write_all(int fd, const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n) {
        const ssize_t w = ::write(fd, c, n);
        if (w <= 0) {
            return;
        }
        c += w;
        n -= static_cast<size_t>(w);
    }
}

inline void send_fragment(int fd, const std::vector<char>& body, bool last = true) {
    const uint32_t mark = htonl((last ? 0x80000000u : 0) | static_cast<uint32_t>(body.size()));
    write_all(fd, &mark, 4);
    write_all(fd, body.data(), body.size());
}

inline bool read_exact(int fd, char* p, size_t n) {
    while (n) {
        pollfd pf{fd, POLLIN, 0};
        if (poll(&pf, 1, 3000) <= 0) {
            return false;
        }
        const ssize_t r = ::read(fd, p, n);
        if (r <= 0) {
            return false;
        }
        p += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

// One whole record (all fragments); empty on timeout or hang-up.
inline std::vector<char> read_record(int fd) {
    std::vector<char> rec;
    for (;;) {
        uint32_t mark;
        if (!read_exact(fd, reinterpret_cast<char*>(&mark), 4)) {
            return {};
        }
        mark = ntohl(mark);
        const size_t len = mark & 0x7fffffff, at = rec.size();
        rec.resize(at + len);
        if (!read_exact(fd, rec.data() + at, len)) {
            return {};
        }
        if (mark & 0x80000000u) {
            return rec;
        }
    }
}

// A CALL with AUTH_NONE credentials and `args` after the header.
inline std::vector<char> call_msg(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                                  const std::vector<char>& args) {
    std::vector<char> m = xdr_encode(64, "call", [&](XDR* x) {
        return xdr_put_u32(x, xid) && xdr_put_u32(x, 0) && xdr_put_u32(x, 2) &&
               xdr_put_u32(x, prog) && xdr_put_u32(x, vers) && xdr_put_u32(x, proc) &&
               xdr_put_u32(x, 0) && xdr_put_u32(x, 0) && xdr_put_u32(x, 0) && xdr_put_u32(x, 0);
    });
    m.insert(m.end(), args.begin(), args.end());
    return m;
}

// A parsed accepted REPLY.
struct Reply {
    uint32_t xid = 0;
    uint32_t accept = 99;
    std::vector<char> body;
};

inline Reply parse_reply(const std::vector<char>& rec) {
    Reply r;
    XdrDecoder d(rec);
    uint32_t mtype, rstat, vf;
    std::vector<char> verf;
    if (!d.u32(r.xid) || !d.u32(mtype) || mtype != 1 || !d.u32(rstat) || rstat != 0 || !d.u32(vf) ||
        !d.opaque(verf, 400) || !d.u32(r.accept)) {
        return Reply{};
    }
    r.body.assign(rec.begin() + static_cast<std::ptrdiff_t>(d.pos()), rec.end());
    return r;
}

// A CALL the client sent, parsed.
struct Call {
    uint32_t xid = 0, prog = 0, vers = 0, proc = 0;
    uint32_t uid = UINT32_MAX, gid = UINT32_MAX; // from AUTH_SYS
    std::vector<char> args;
    bool ok = false;
};

inline Call parse_call(const std::vector<char>& rec) {
    Call c;
    XdrDecoder d(rec);
    uint32_t mtype, rpcvers, flavor, vflavor;
    std::vector<char> cred, verf;
    if (!d.u32(c.xid) || !d.u32(mtype) || mtype != 0 || !d.u32(rpcvers) || !d.u32(c.prog) ||
        !d.u32(c.vers) || !d.u32(c.proc) || !d.u32(flavor) || !d.opaque(cred, 400) ||
        !d.u32(vflavor) || !d.opaque(verf, 400)) {
        return c;
    }
    if (flavor == 1) { // AUTH_SYS: stamp, machine name, uid, gid, gids
        XdrDecoder a(cred);
        uint32_t stamp;
        std::string machine;
        a.u32(stamp);
        a.string(machine, 255);
        a.u32(c.uid);
        a.u32(c.gid);
    }
    c.args.assign(rec.begin() + static_cast<std::ptrdiff_t>(d.pos()), rec.end());
    c.ok = true;
    return c;
}

// An accepted reply (SUCCESS unless `accept` says otherwise) carrying `results`.
inline std::vector<char> reply_msg(uint32_t xid, const std::vector<char>& results,
                                   uint32_t accept = 0) {
    std::vector<char> m = xdr_encode(64, "reply", [&](XDR* x) {
        return xdr_put_u32(x, xid) && xdr_put_u32(x, 1) && xdr_put_u32(x, 0) && xdr_put_u32(x, 0) &&
               xdr_put_u32(x, 0) && xdr_put_u32(x, accept);
    });
    m.insert(m.end(), results.begin(), results.end());
    return m;
}

} // namespace fake_peer
