// SPDX-License-Identifier: LGPL-3.0-or-later
#include "model/map_text.hpp"

#include "model/hex.hpp"
#include "model/naming.hpp"

#include <charconv>
#include <sstream>

namespace flexfiles::mds {

namespace {

constexpr std::string_view kHeader = "flexfiles-map 1";

std::optional<std::vector<std::uint8_t>> unhex(std::string_view s) {
    if (s.size() % 2 != 0)
        return std::nullopt;
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9')
            return c - '0';
        if (c >= 'a' && c <= 'f')
            return c - 'a' + 10;
        return -1;
    };
    std::vector<std::uint8_t> out;
    out.reserve(s.size() / 2);
    for (std::size_t i = 0; i < s.size(); i += 2) {
        const int hi = nibble(s[i]);
        const int lo = nibble(s[i + 1]);
        if (hi < 0 || lo < 0)
            return std::nullopt;
        out.push_back(static_cast<std::uint8_t>(hi << 4 | lo));
    }
    return out;
}

// Reads a line's space-separated words in order, each checked as it is taken.
class Words {
public:
    explicit Words(std::string_view line) : rest_(line) {}

    bool literal(std::string_view word) { return next() == word; }
    template <class T> bool number(T& out) {
        const std::string_view w = next();
        if (w.empty() || (w.size() > 1 && w[0] == '0'))
            return false; // the encoder writes no leading zeros
        const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), out);
        return ec == std::errc() && end == w.data() + w.size();
    }
    std::string_view next() {
        if (bad_)
            return {};
        const std::size_t sp = rest_.find(' ');
        std::string_view w = rest_.substr(0, sp);
        rest_ = sp == std::string_view::npos ? std::string_view() : rest_.substr(sp + 1);
        if (w.empty() || (sp != std::string_view::npos && rest_.empty()))
            bad_ = true; // empty word, or a trailing space
        return bad_ ? std::string_view() : w;
    }
    bool done() const { return !bad_ && rest_.empty(); }

private:
    std::string_view rest_;
    bool bad_ = false;
};

ParsedMapText refuse(std::size_t line, const std::string& why) {
    return {std::nullopt, "line " + std::to_string(line) + ": " + why};
}

} // namespace

bool is_reserved_xattr_name(std::string_view name) noexcept {
    return name.substr(0, kReservedXattrPrefix.size()) == kReservedXattrPrefix;
}

std::string encode_map_text(const DataFileMap& map) {
    std::ostringstream out;
    out << kHeader << "\nfile " << map.file_id << " stripe_unit " << map.stripe_unit << "\n";
    for (const DataFile& f : map.files)
        out << "mirror " << f.mirror << " ds " << f.ds_id << " deviceid " << to_hex(f.deviceid)
            << " uid " << f.fencing_uid << " gid " << f.fencing_gid << " fh "
            << to_hex({f.fh.data(), f.fh.size()}) << " name " << f.name << "\n";
    return out.str();
}

ParsedMapText parse_map_text(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        if (nl == std::string_view::npos)
            return refuse(lines.size() + 1, "not terminated by a newline");
        lines.push_back(text.substr(0, nl));
        text.remove_prefix(nl + 1);
    }
    if (lines.empty() || lines[0] != kHeader)
        return refuse(1, "not \"" + std::string(kHeader) + "\"");
    if (lines.size() < 3)
        return refuse(lines.size() + 1, "a map has a file line and at least one data file");
    if (lines.size() - 2 > kMaxMapTextDataFiles)
        return refuse(lines.size(),
                      "more than " + std::to_string(kMaxMapTextDataFiles) + " data files");

    DataFileMap map;
    Words head(lines[1]);
    if (!(head.literal("file") && head.number(map.file_id) && head.literal("stripe_unit") &&
          head.number(map.stripe_unit) && head.done()))
        return refuse(2, "not \"file <fileid> stripe_unit <bytes>\"");

    for (std::size_t i = 2; i < lines.size(); i++) {
        DataFile f;
        Words w(lines[i]);
        std::string_view deviceid, fh, name;
        const bool shape = w.literal("mirror") && w.number(f.mirror) && w.literal("ds") &&
                           w.number(f.ds_id) && w.literal("deviceid") &&
                           !(deviceid = w.next()).empty() && w.literal("uid") &&
                           w.number(f.fencing_uid) && w.literal("gid") && w.number(f.fencing_gid) &&
                           w.literal("fh") && !(fh = w.next()).empty() && w.literal("name") &&
                           !(name = w.next()).empty() && w.done();
        if (!shape)
            return refuse(i + 1, "not \"mirror <n> ds <id> deviceid <hex> uid <n> gid <n> fh "
                                 "<hex> name <name>\"");
        if (f.mirror != i - 2)
            return refuse(i + 1, "mirror " + std::to_string(f.mirror) + " out of order");
        const auto dev = unhex(deviceid);
        if (!dev || dev->size() != f.deviceid.size())
            return refuse(i + 1, "deviceid is not 16 bytes of lowercase hex");
        std::copy(dev->begin(), dev->end(), f.deviceid.begin());
        auto handle = unhex(fh);
        if (!handle || handle->empty() || handle->size() > nfs3::Fh::kMaxSize)
            return refuse(i + 1, "fh is not 1 to 64 bytes of lowercase hex");
        f.fh = std::move(*handle);
        if (!fleet::parse_data_file_name(name))
            return refuse(i + 1, "\"" + std::string(name) + "\" is not a data-file name");
        f.name = std::string(name);
        map.files.push_back(std::move(f));
    }
    return {std::move(map), {}};
}

} // namespace flexfiles::mds
