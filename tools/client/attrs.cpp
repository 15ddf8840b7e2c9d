// SPDX-License-Identifier: LGPL-3.0-or-later
#include "attrs.hpp"

#include "ganesha_xdr.h"
#include "xdr_stream.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <iterator>

namespace flexfiles::client {

namespace {

// Bounds on variable-length values, so a hostile reply cannot make us allocate much.
constexpr uint32_t kMaxStringBytes = NFS4_OPAQUE_LIMIT;
constexpr uint32_t kMaxListItems = 64;
constexpr uint32_t kMaxBitmapWords = 8;

// ---- XDR of one value; the stream's direction says encode or decode. -------------

bool xdr_value(XDR* x, uint32_t& v) {
    return xdr_uint32_t(x, &v);
}
bool xdr_value(XDR* x, uint64_t& v) {
    return xdr_uint64_t(x, &v);
}

bool xdr_value(XDR* x, bool& v) {
    uint32_t w = v ? 1 : 0;
    if (!xdr_uint32_t(x, &w) || w > 1) {
        return false;
    }
    v = w == 1;
    return true;
}

bool xdr_value(XDR* x, NfsTime& v) {
    return xdr_int64_t(x, &v.seconds) && xdr_uint32_t(x, &v.nseconds);
}

bool xdr_value(XDR* x, SetTime& v) {
    uint32_t how = v.to_client_time ? SET_TO_CLIENT_TIME4 : SET_TO_SERVER_TIME4;
    if (!xdr_uint32_t(x, &how) || how > SET_TO_CLIENT_TIME4) {
        return false;
    }
    v.to_client_time = how == SET_TO_CLIENT_TIME4;
    return !v.to_client_time || xdr_value(x, v.time);
}

bool xdr_value(XDR* x, Fsid& v) {
    return xdr_uint64_t(x, &v.major) && xdr_uint64_t(x, &v.minor);
}

bool xdr_value(XDR* x, SpecData& v) {
    return xdr_uint32_t(x, &v.major) && xdr_uint32_t(x, &v.minor);
}

template <typename Bytes> bool xdr_byte_string(XDR* x, Bytes& v, uint32_t max) {
    uint32_t len = static_cast<uint32_t>(v.size());
    if (!xdr_uint32_t(x, &len) || len > max) {
        return false;
    }
    if (x->x_op == XDR_DECODE) {
        v.resize(len);
        return xdr_opaque_decode(x, v.data(), len);
    }
    return xdr_opaque_encode(x, v.data(), len);
}

bool xdr_value(XDR* x, std::string& v) {
    return xdr_byte_string(x, v, kMaxStringBytes);
}
bool xdr_value(XDR* x, std::vector<char>& v) {
    return xdr_byte_string(x, v, NFS4_FHSIZE);
}

bool xdr_value(XDR* x, std::vector<uint32_t>& v) {
    uint32_t n = static_cast<uint32_t>(v.size());
    if (!xdr_uint32_t(x, &n) || n > kMaxListItems) {
        return false;
    }
    v.resize(n);
    for (uint32_t& item : v) {
        if (!xdr_uint32_t(x, &item)) {
            return false;
        }
    }
    return true;
}

bool xdr_value(XDR* x, AttrMask& v) {
    if (x->x_op == XDR_DECODE) {
        uint32_t n = 0;
        if (!xdr_uint32_t(x, &n) || n > kMaxBitmapWords) {
            return false;
        }
        v = AttrMask();
        for (uint32_t i = 0; i < n; ++i) {
            uint32_t word = 0;
            if (!xdr_uint32_t(x, &word)) {
                return false;
            }
            for (uint32_t bit = 0; bit < 32; ++bit) {
                if ((word & (1u << bit)) && 32 * i + bit < AttrMask::kMaxAttr) {
                    v.set(32 * i + bit);
                }
            }
        }
        return true;
    }
    bitmap4 b = v.to_bitmap4();
    return ff_xdr_bitmap4(x, &b);
}

// ---- Printing. --------------------------------------------------------------------

std::string format_value(uint32_t v) {
    return std::to_string(v);
}
std::string format_value(uint64_t v) {
    return std::to_string(v);
}
std::string format_value(bool v) {
    return v ? "true" : "false";
}
std::string format_value(const NfsTime& v) {
    return format_time(v);
}
std::string format_value(const SetTime& v) {
    return v.to_client_time ? format_time(v.time) : "server time";
}
std::string format_value(const Fsid& v) {
    return std::to_string(v.major) + "." + std::to_string(v.minor);
}
std::string format_value(const SpecData& v) {
    return std::to_string(v.major) + "," + std::to_string(v.minor);
}
std::string format_value(const std::string& v) {
    return v;
}
std::string format_value(const std::vector<char>& v) {
    std::string out;
    char hex[3];
    for (char c : v) {
        std::snprintf(hex, sizeof(hex), "%02x", static_cast<unsigned char>(c));
        out += hex;
    }
    return out;
}
std::string format_value(const AttrMask& v) {
    return v.describe();
}
[[maybe_unused]] std::string format_value(const std::vector<uint32_t>& v) {
    std::string out;
    for (uint32_t item : v) {
        out += (out.empty() ? "" : ",") + std::to_string(item);
    }
    return out;
}

std::string format_mode(const uint32_t& mode) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "%04o", mode);
    return buf;
}

std::string format_type(const uint32_t& type) {
    return ftype_name(type);
}

std::string format_status(const uint32_t& status) {
    return status == 0 ? "NFS4_OK" : "nfsstat4 " + std::to_string(status);
}

std::string format_layout_types(const std::vector<uint32_t>& types) {
    std::string out;
    for (uint32_t t : types) {
        const char* name = nullptr;
        switch (t) {
        case LAYOUT4_NFSV4_1_FILES:
            name = "LAYOUT4_NFSV4_1_FILES";
            break;
        case LAYOUT4_OSD2_OBJECTS:
            name = "LAYOUT4_OSD2_OBJECTS";
            break;
        case LAYOUT4_BLOCK_VOLUME:
            name = "LAYOUT4_BLOCK_VOLUME";
            break;
        case LAYOUT4_FLEX_FILES:
            name = "LAYOUT4_FLEX_FILES";
            break;
        default:
            break;
        }
        out += (out.empty() ? "" : ",") + (name ? std::string(name) : std::to_string(t));
    }
    return out;
}

// ---- The table. -------------------------------------------------------------------

struct AttrCodec {
    uint32_t num;
    const char* name;
    bool (*xdr)(XDR*, Fattr&);
    bool (*present)(const Fattr&);
    std::string (*format)(const Fattr&);
};

template <auto Member> bool codec_xdr(XDR* x, Fattr& a) {
    auto& field = a.*Member;
    if (x->x_op == XDR_DECODE) {
        field.emplace();
    }
    return field.has_value() && xdr_value(x, *field);
}

template <auto Member> bool codec_present(const Fattr& a) {
    return (a.*Member).has_value();
}

template <auto Member> std::string codec_format(const Fattr& a) {
    return format_value(*(a.*Member));
}

template <auto Member, auto Format> std::string codec_format_with(const Fattr& a) {
    return Format(*(a.*Member));
}

#define FF_ATTR(num, field)                                                                        \
    AttrCodec {                                                                                    \
        num, #field, &codec_xdr<&Fattr::field>, &codec_present<&Fattr::field>,                     \
            &codec_format<&Fattr::field>                                                           \
    }
#define FF_ATTR_FMT(num, field, fmt)                                                               \
    AttrCodec {                                                                                    \
        num, #field, &codec_xdr<&Fattr::field>, &codec_present<&Fattr::field>,                     \
            &codec_format_with<&Fattr::field, fmt>                                                 \
    }

// RFC 8881 section 5 (and RFC 5661 numbering), in attribute order.
const AttrCodec kAttrTable[] = {
    FF_ATTR(FATTR4_SUPPORTED_ATTRS, supported_attrs),
    FF_ATTR_FMT(FATTR4_TYPE, type, &format_type),
    FF_ATTR(FATTR4_FH_EXPIRE_TYPE, fh_expire_type),
    FF_ATTR(FATTR4_CHANGE, change),
    FF_ATTR(FATTR4_SIZE, size),
    FF_ATTR(FATTR4_LINK_SUPPORT, link_support),
    FF_ATTR(FATTR4_SYMLINK_SUPPORT, symlink_support),
    FF_ATTR(FATTR4_NAMED_ATTR, named_attr),
    FF_ATTR(FATTR4_FSID, fsid),
    FF_ATTR(FATTR4_UNIQUE_HANDLES, unique_handles),
    FF_ATTR(FATTR4_LEASE_TIME, lease_time),
    FF_ATTR_FMT(FATTR4_RDATTR_ERROR, rdattr_error, &format_status),
    FF_ATTR(FATTR4_ACLSUPPORT, aclsupport),
    FF_ATTR(FATTR4_CANSETTIME, cansettime),
    FF_ATTR(FATTR4_CASE_INSENSITIVE, case_insensitive),
    FF_ATTR(FATTR4_CASE_PRESERVING, case_preserving),
    FF_ATTR(FATTR4_CHOWN_RESTRICTED, chown_restricted),
    FF_ATTR(FATTR4_FILEHANDLE, filehandle),
    FF_ATTR(FATTR4_FILEID, fileid),
    FF_ATTR(FATTR4_FILES_AVAIL, files_avail),
    FF_ATTR(FATTR4_FILES_FREE, files_free),
    FF_ATTR(FATTR4_FILES_TOTAL, files_total),
    FF_ATTR(FATTR4_HOMOGENEOUS, homogeneous),
    FF_ATTR(FATTR4_MAXFILESIZE, maxfilesize),
    FF_ATTR(FATTR4_MAXLINK, maxlink),
    FF_ATTR(FATTR4_MAXNAME, maxname),
    FF_ATTR(FATTR4_MAXREAD, maxread),
    FF_ATTR(FATTR4_MAXWRITE, maxwrite),
    FF_ATTR_FMT(FATTR4_MODE, mode, &format_mode),
    FF_ATTR(FATTR4_NO_TRUNC, no_trunc),
    FF_ATTR(FATTR4_NUMLINKS, numlinks),
    FF_ATTR(FATTR4_OWNER, owner),
    FF_ATTR(FATTR4_OWNER_GROUP, owner_group),
    FF_ATTR(FATTR4_RAWDEV, rawdev),
    FF_ATTR(FATTR4_SPACE_AVAIL, space_avail),
    FF_ATTR(FATTR4_SPACE_FREE, space_free),
    FF_ATTR(FATTR4_SPACE_TOTAL, space_total),
    FF_ATTR(FATTR4_SPACE_USED, space_used),
    FF_ATTR(FATTR4_TIME_ACCESS, time_access),
    FF_ATTR(FATTR4_TIME_ACCESS_SET, time_access_set),
    FF_ATTR(FATTR4_TIME_CREATE, time_create),
    FF_ATTR(FATTR4_TIME_DELTA, time_delta),
    FF_ATTR(FATTR4_TIME_METADATA, time_metadata),
    FF_ATTR(FATTR4_TIME_MODIFY, time_modify),
    FF_ATTR(FATTR4_TIME_MODIFY_SET, time_modify_set),
    FF_ATTR(FATTR4_MOUNTED_ON_FILEID, mounted_on_fileid),
    FF_ATTR_FMT(FATTR4_FS_LAYOUT_TYPES, fs_layout_types, &format_layout_types),
    FF_ATTR_FMT(FATTR4_LAYOUT_TYPES, layout_types, &format_layout_types),
    FF_ATTR(FATTR4_LAYOUT_BLKSIZE, layout_blksize),
    FF_ATTR(FATTR4_LAYOUT_ALIGNMENT, layout_alignment),
    FF_ATTR(FATTR4_SUPPATTR_EXCLCREAT, suppattr_exclcreat),
};

#undef FF_ATTR
#undef FF_ATTR_FMT

const AttrCodec* find_codec(uint32_t attr) {
    auto it = std::lower_bound(std::begin(kAttrTable), std::end(kAttrTable), attr,
                               [](const AttrCodec& c, uint32_t a) { return c.num < a; });
    return (it != std::end(kAttrTable) && it->num == attr) ? &*it : nullptr;
}

} // namespace

// ---- AttrMask ---------------------------------------------------------------------

AttrMask::AttrMask(std::initializer_list<uint32_t> attrs) {
    for (uint32_t a : attrs) {
        set(a);
    }
}

AttrMask& AttrMask::set(uint32_t attr) {
    if (attr < kMaxAttr) {
        words_[attr / 32] |= 1u << (attr % 32);
    }
    return *this;
}

bool AttrMask::test(uint32_t attr) const {
    return attr < kMaxAttr && (words_[attr / 32] & (1u << (attr % 32))) != 0;
}

bool AttrMask::empty() const {
    return std::all_of(words_.begin(), words_.end(), [](uint32_t w) { return w == 0; });
}

std::vector<uint32_t> AttrMask::list() const {
    std::vector<uint32_t> out;
    for (uint32_t a = 0; a < kMaxAttr; ++a) {
        if (test(a)) {
            out.push_back(a);
        }
    }
    return out;
}

std::string AttrMask::describe() const {
    std::string out = "{";
    for (uint32_t a : list()) {
        out += (out.size() > 1 ? "," : "") + attr_name(a);
    }
    return out + "}";
}

bitmap4 AttrMask::to_bitmap4() const {
    bitmap4 b{};
    uint32_t len = 0;
    for (uint32_t i = 0; i < BITMAP4_MAPLEN; ++i) {
        b.map[i] = words_[i];
        if (words_[i] != 0) {
            len = i + 1;
        }
    }
    b.bitmap4_len = len;
    return b;
}

AttrMask AttrMask::from_bitmap4(const bitmap4& b) {
    AttrMask m;
    for (uint32_t i = 0; i < std::min<uint32_t>(b.bitmap4_len, BITMAP4_MAPLEN); ++i) {
        m.words_[i] = b.map[i];
    }
    return m;
}

// ---- Fattr ------------------------------------------------------------------------

AttrMask Fattr::mask() const {
    AttrMask m;
    for (const AttrCodec& c : kAttrTable) {
        if (c.present(*this)) {
            m.set(c.num);
        }
    }
    return m;
}

fattr4 EncodedFattr::view() const {
    fattr4 f{};
    f.attrmask = mask.to_bitmap4();
    f.attr_vals.attrlist4_len = static_cast<u_int>(values.size());
    f.attr_vals.attrlist4_val = const_cast<char*>(values.data());
    return f;
}

Fattr decode_fattr4(const fattr4& raw) {
    return decode_fattr4(AttrMask::from_bitmap4(raw.attrmask), raw.attr_vals.attrlist4_val,
                         raw.attr_vals.attrlist4_len);
}

Fattr decode_fattr4(const AttrMask& mask, const char* values, std::size_t len) {
    Fattr out;
    XdrDecoder d(std::span<const char>(values, len));
    for (uint32_t attr : mask.list()) {
        const AttrCodec* codec = find_codec(attr);
        if (codec == nullptr) {
            throw XdrError("fattr4: attribute " + std::to_string(attr) +
                           " has no decoder, cannot decode the attributes after it");
        }
        const std::size_t at = d.pos();
        if (!codec->xdr(d.xdr(), out)) {
            throw XdrError("fattr4: cannot decode attribute " + std::string(codec->name) + " (" +
                           std::to_string(attr) + ") at byte " + std::to_string(at) + " of " +
                           std::to_string(len));
        }
    }
    if (d.remaining() != 0) {
        throw XdrError("fattr4: " + std::to_string(d.remaining()) +
                       " bytes left after the last attribute");
    }
    return out;
}

EncodedFattr encode_fattr4(const Fattr& attrs) {
    EncodedFattr out;
    out.mask = attrs.mask();
    std::size_t hint = 512;
    hint += attrs.owner ? attrs.owner->size() : 0;
    hint += attrs.owner_group ? attrs.owner_group->size() : 0;
    out.values = xdr_encode(hint, "fattr4", [&](XDR* x) {
        for (uint32_t attr : out.mask.list()) {
            // Encoding only reads the value.
            if (!find_codec(attr)->xdr(x, const_cast<Fattr&>(attrs))) {
                return false;
            }
        }
        return true;
    });
    return out;
}

std::string attr_name(uint32_t attr) {
    const AttrCodec* c = find_codec(attr);
    return c ? c->name : "attr_" + std::to_string(attr);
}

bool attr_supported(uint32_t attr) {
    return find_codec(attr) != nullptr;
}

std::string format_attr(uint32_t attr, const Fattr& attrs) {
    const AttrCodec* c = find_codec(attr);
    return (c && c->present(attrs)) ? c->format(attrs) : std::string();
}

std::string format_attrs(const Fattr& attrs, const std::string& indent) {
    std::string out;
    for (const AttrCodec& c : kAttrTable) {
        if (c.present(attrs)) {
            out += indent + c.name + ": " + c.format(attrs) + "\n";
        }
    }
    return out;
}

AttrMask stat_attrs() {
    return {FATTR4_TYPE,        FATTR4_CHANGE,     FATTR4_SIZE,        FATTR4_FSID,
            FATTR4_FILEID,      FATTR4_MODE,       FATTR4_NUMLINKS,    FATTR4_OWNER,
            FATTR4_OWNER_GROUP, FATTR4_SPACE_USED, FATTR4_TIME_ACCESS, FATTR4_TIME_METADATA,
            FATTR4_TIME_MODIFY};
}

std::string format_time(const NfsTime& t) {
    char frac[16];
    std::snprintf(frac, sizeof(frac), "%09" PRIu32, t.nseconds);
    std::string out = std::to_string(t.seconds) + "." + frac;
    const time_t secs = static_cast<time_t>(t.seconds);
    std::tm tm{};
    if (gmtime_r(&secs, &tm) != nullptr) {
        char when[64];
        std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
        out += std::string(" (") + when + "." + frac + "Z)";
    }
    return out;
}

const char* ftype_name(uint32_t type) {
    switch (type) {
    case NF4REG:
        return "NF4REG";
    case NF4DIR:
        return "NF4DIR";
    case NF4BLK:
        return "NF4BLK";
    case NF4CHR:
        return "NF4CHR";
    case NF4LNK:
        return "NF4LNK";
    case NF4SOCK:
        return "NF4SOCK";
    case NF4FIFO:
        return "NF4FIFO";
    case NF4ATTRDIR:
        return "NF4ATTRDIR";
    case NF4NAMEDATTR:
        return "NF4NAMEDATTR";
    default:
        return "NF4_UNKNOWN_TYPE";
    }
}

} // namespace flexfiles::client
