// SPDX-License-Identifier: LGPL-3.0-or-later
#include "nfs4_names.hpp"

#include <algorithm>
#include <iterator>

namespace flexfiles::client {

namespace {

struct Name {
    uint32_t value;
    const char* name;
};

// RFC 8881 section 15, RFC 7862 section 11 and RFC 8276, in value order.
constexpr Name kStatusNames[] = {
    {0, "NFS4_OK"},
    {1, "NFS4ERR_PERM"},
    {2, "NFS4ERR_NOENT"},
    {5, "NFS4ERR_IO"},
    {6, "NFS4ERR_NXIO"},
    {13, "NFS4ERR_ACCESS"},
    {17, "NFS4ERR_EXIST"},
    {18, "NFS4ERR_XDEV"},
    {20, "NFS4ERR_NOTDIR"},
    {21, "NFS4ERR_ISDIR"},
    {22, "NFS4ERR_INVAL"},
    {27, "NFS4ERR_FBIG"},
    {28, "NFS4ERR_NOSPC"},
    {30, "NFS4ERR_ROFS"},
    {31, "NFS4ERR_MLINK"},
    {63, "NFS4ERR_NAMETOOLONG"},
    {66, "NFS4ERR_NOTEMPTY"},
    {69, "NFS4ERR_DQUOT"},
    {70, "NFS4ERR_STALE"},
    {10001, "NFS4ERR_BADHANDLE"},
    {10003, "NFS4ERR_BAD_COOKIE"},
    {10004, "NFS4ERR_NOTSUPP"},
    {10005, "NFS4ERR_TOOSMALL"},
    {10006, "NFS4ERR_SERVERFAULT"},
    {10007, "NFS4ERR_BADTYPE"},
    {10008, "NFS4ERR_DELAY"},
    {10009, "NFS4ERR_SAME"},
    {10010, "NFS4ERR_DENIED"},
    {10011, "NFS4ERR_EXPIRED"},
    {10012, "NFS4ERR_LOCKED"},
    {10013, "NFS4ERR_GRACE"},
    {10014, "NFS4ERR_FHEXPIRED"},
    {10015, "NFS4ERR_SHARE_DENIED"},
    {10016, "NFS4ERR_WRONGSEC"},
    {10017, "NFS4ERR_CLID_INUSE"},
    {10018, "NFS4ERR_RESOURCE"},
    {10019, "NFS4ERR_MOVED"},
    {10020, "NFS4ERR_NOFILEHANDLE"},
    {10021, "NFS4ERR_MINOR_VERS_MISMATCH"},
    {10022, "NFS4ERR_STALE_CLIENTID"},
    {10023, "NFS4ERR_STALE_STATEID"},
    {10024, "NFS4ERR_OLD_STATEID"},
    {10025, "NFS4ERR_BAD_STATEID"},
    {10026, "NFS4ERR_BAD_SEQID"},
    {10027, "NFS4ERR_NOT_SAME"},
    {10028, "NFS4ERR_LOCK_RANGE"},
    {10029, "NFS4ERR_SYMLINK"},
    {10030, "NFS4ERR_RESTOREFH"},
    {10031, "NFS4ERR_LEASE_MOVED"},
    {10032, "NFS4ERR_ATTRNOTSUPP"},
    {10033, "NFS4ERR_NO_GRACE"},
    {10034, "NFS4ERR_RECLAIM_BAD"},
    {10035, "NFS4ERR_RECLAIM_CONFLICT"},
    {10036, "NFS4ERR_BADXDR"},
    {10037, "NFS4ERR_LOCKS_HELD"},
    {10038, "NFS4ERR_OPENMODE"},
    {10039, "NFS4ERR_BADOWNER"},
    {10040, "NFS4ERR_BADCHAR"},
    {10041, "NFS4ERR_BADNAME"},
    {10042, "NFS4ERR_BAD_RANGE"},
    {10043, "NFS4ERR_LOCK_NOTSUPP"},
    {10044, "NFS4ERR_OP_ILLEGAL"},
    {10045, "NFS4ERR_DEADLOCK"},
    {10046, "NFS4ERR_FILE_OPEN"},
    {10047, "NFS4ERR_ADMIN_REVOKED"},
    {10048, "NFS4ERR_CB_PATH_DOWN"},
    {10049, "NFS4ERR_BADIOMODE"},
    {10050, "NFS4ERR_BADLAYOUT"},
    {10051, "NFS4ERR_BAD_SESSION_DIGEST"},
    {10052, "NFS4ERR_BADSESSION"},
    {10053, "NFS4ERR_BADSLOT"},
    {10054, "NFS4ERR_COMPLETE_ALREADY"},
    {10055, "NFS4ERR_CONN_NOT_BOUND_TO_SESSION"},
    {10056, "NFS4ERR_DELEG_ALREADY_WANTED"},
    {10057, "NFS4ERR_BACK_CHAN_BUSY"},
    {10058, "NFS4ERR_LAYOUTTRYLATER"},
    {10059, "NFS4ERR_LAYOUTUNAVAILABLE"},
    {10060, "NFS4ERR_NOMATCHING_LAYOUT"},
    {10061, "NFS4ERR_RECALLCONFLICT"},
    {10062, "NFS4ERR_UNKNOWN_LAYOUTTYPE"},
    {10063, "NFS4ERR_SEQ_MISORDERED"},
    {10064, "NFS4ERR_SEQUENCE_POS"},
    {10065, "NFS4ERR_REQ_TOO_BIG"},
    {10066, "NFS4ERR_REP_TOO_BIG"},
    {10067, "NFS4ERR_REP_TOO_BIG_TO_CACHE"},
    {10068, "NFS4ERR_RETRY_UNCACHED_REP"},
    {10069, "NFS4ERR_UNSAFE_COMPOUND"},
    {10070, "NFS4ERR_TOO_MANY_OPS"},
    {10071, "NFS4ERR_OP_NOT_IN_SESSION"},
    {10072, "NFS4ERR_HASH_ALG_UNSUPP"},
    {10074, "NFS4ERR_CLIENTID_BUSY"},
    {10075, "NFS4ERR_PNFS_IO_HOLE"},
    {10076, "NFS4ERR_SEQ_FALSE_RETRY"},
    {10077, "NFS4ERR_BAD_HIGH_SLOT"},
    {10078, "NFS4ERR_DEADSESSION"},
    {10079, "NFS4ERR_ENCR_ALG_UNSUPP"},
    {10080, "NFS4ERR_PNFS_NO_LAYOUT"},
    {10081, "NFS4ERR_NOT_ONLY_OP"},
    {10082, "NFS4ERR_WRONG_CRED"},
    {10083, "NFS4ERR_WRONG_TYPE"},
    {10084, "NFS4ERR_DIRDELEG_UNAVAIL"},
    {10085, "NFS4ERR_REJECT_DELEG"},
    {10086, "NFS4ERR_RETURNCONFLICT"},
    {10087, "NFS4ERR_DELEG_REVOKED"},
    {10088, "NFS4ERR_PARTNER_NOTSUPP"},
    {10089, "NFS4ERR_PARTNER_NO_AUTH"},
    {10090, "NFS4ERR_UNION_NOTSUPP"},
    {10091, "NFS4ERR_OFFLOAD_DENIED"},
    {10092, "NFS4ERR_WRONG_LFS"},
    {10093, "NFS4ERR_BADLABEL"},
    {10094, "NFS4ERR_OFFLOAD_NO_REQS"},
    {10095, "NFS4ERR_NOXATTR"},
    {10096, "NFS4ERR_XATTR2BIG"},
    {11001, "NFS4ERR_REPLAY"}, // Ganesha-internal, never on the wire
};

// RFC 8881 section 16.2, RFC 7862, RFC 8276 and RFC 9766 (LAYOUT_WCC), in value order.
constexpr Name kOpNames[] = {
    {3, "ACCESS"},
    {4, "CLOSE"},
    {5, "COMMIT"},
    {6, "CREATE"},
    {7, "DELEGPURGE"},
    {8, "DELEGRETURN"},
    {9, "GETATTR"},
    {10, "GETFH"},
    {11, "LINK"},
    {12, "LOCK"},
    {13, "LOCKT"},
    {14, "LOCKU"},
    {15, "LOOKUP"},
    {16, "LOOKUPP"},
    {17, "NVERIFY"},
    {18, "OPEN"},
    {19, "OPENATTR"},
    {20, "OPEN_CONFIRM"},
    {21, "OPEN_DOWNGRADE"},
    {22, "PUTFH"},
    {23, "PUTPUBFH"},
    {24, "PUTROOTFH"},
    {25, "READ"},
    {26, "READDIR"},
    {27, "READLINK"},
    {28, "REMOVE"},
    {29, "RENAME"},
    {30, "RENEW"},
    {31, "RESTOREFH"},
    {32, "SAVEFH"},
    {33, "SECINFO"},
    {34, "SETATTR"},
    {35, "SETCLIENTID"},
    {36, "SETCLIENTID_CONFIRM"},
    {37, "VERIFY"},
    {38, "WRITE"},
    {39, "RELEASE_LOCKOWNER"},
    {40, "BACKCHANNEL_CTL"},
    {41, "BIND_CONN_TO_SESSION"},
    {42, "EXCHANGE_ID"},
    {43, "CREATE_SESSION"},
    {44, "DESTROY_SESSION"},
    {45, "FREE_STATEID"},
    {46, "GET_DIR_DELEGATION"},
    {47, "GETDEVICEINFO"},
    {48, "GETDEVICELIST"},
    {49, "LAYOUTCOMMIT"},
    {50, "LAYOUTGET"},
    {51, "LAYOUTRETURN"},
    {52, "SECINFO_NO_NAME"},
    {53, "SEQUENCE"},
    {54, "SET_SSV"},
    {55, "TEST_STATEID"},
    {56, "WANT_DELEGATION"},
    {57, "DESTROY_CLIENTID"},
    {58, "RECLAIM_COMPLETE"},
    {59, "ALLOCATE"},
    {60, "COPY"},
    {61, "COPY_NOTIFY"},
    {62, "DEALLOCATE"},
    {63, "IO_ADVISE"},
    {64, "LAYOUTERROR"},
    {65, "LAYOUTSTATS"},
    {66, "OFFLOAD_CANCEL"},
    {67, "OFFLOAD_STATUS"},
    {68, "READ_PLUS"},
    {69, "SEEK"},
    {70, "WRITE_SAME"},
    {71, "CLONE"},
    {72, "GETXATTR"},
    {73, "SETXATTR"},
    {74, "LISTXATTR"},
    {75, "REMOVEXATTR"},
    {77, "LAYOUT_WCC"},
    {10044, "ILLEGAL"},
};

// RFC 8881 section 20, in value order.
constexpr Name kCbOpNames[] = {
    {3, "CB_GETATTR"},
    {4, "CB_RECALL"},
    {5, "CB_LAYOUTRECALL"},
    {6, "CB_NOTIFY"},
    {7, "CB_PUSH_DELEG"},
    {8, "CB_RECALL_ANY"},
    {9, "CB_RECALLABLE_OBJ_AVAIL"},
    {10, "CB_RECALL_SLOT"},
    {11, "CB_SEQUENCE"},
    {12, "CB_WANTS_CANCELLED"},
    {13, "CB_NOTIFY_LOCK"},
    {14, "CB_NOTIFY_DEVICEID"},
    {15, "CB_OFFLOAD"},
    {10044, "CB_ILLEGAL"},
};

// The lookups below are binary searches.
template <std::size_t N> constexpr bool sorted(const Name (&table)[N]) {
    for (std::size_t i = 1; i < N; ++i) {
        if (table[i - 1].value >= table[i].value) {
            return false;
        }
    }
    return true;
}
static_assert(sorted(kStatusNames) && sorted(kOpNames) && sorted(kCbOpNames));

template <std::size_t N> const char* find(const Name (&table)[N], uint32_t value) {
    auto it = std::lower_bound(std::begin(table), std::end(table), value,
                               [](const Name& n, uint32_t v) { return n.value < v; });
    return (it != std::end(table) && it->value == value) ? it->name : nullptr;
}

} // namespace

std::string op_name(uint32_t opnum) {
    const char* n = find(kOpNames, opnum);
    return n ? n : "OP_" + std::to_string(opnum);
}

std::string status_name(uint32_t status) {
    const char* n = find(kStatusNames, status);
    return n ? n : "NFS4ERR_" + std::to_string(status);
}

std::string cb_op_name(uint32_t opnum) {
    const char* n = find(kCbOpNames, opnum);
    return n ? n : "CB_OP_" + std::to_string(opnum);
}

} // namespace flexfiles::client
