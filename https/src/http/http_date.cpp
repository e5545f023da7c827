#include "stepback/https/http/http_date.hpp"

#include "http1_text.hpp"

namespace stepback::https {
namespace {

constexpr std::string_view kShortDays[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
constexpr std::string_view kLongDays[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                          "Friday", "Saturday", "Sunday"};
constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// Reads a date left to right; any mismatch makes ok() false for good.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}

  void literal(std::string_view lit) {
    if (ok_ && http1_text::sub(s_, 0, lit.size()) == lit) {
      s_.remove_prefix(lit.size());
    } else {
      ok_ = false;
    }
  }
  // Exactly `n` ASCII digits.
  unsigned digits(std::size_t n) {
    unsigned v = 0;
    if (!ok_ || s_.size() < n) {
      ok_ = false;
      return 0;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (s_[i] < '0' || s_[i] > '9') {
        ok_ = false;
        return 0;
      }
      v = v * 10 + static_cast<unsigned>(s_[i] - '0');
    }
    s_.remove_prefix(n);
    return v;
  }
  // One of `names`, as its 1-based index.
  template <std::size_t N>
  unsigned one_of(const std::string_view (&names)[N]) {
    for (std::size_t i = 0; ok_ && i < N; ++i) {
      if (http1_text::sub(s_, 0, names[i].size()) == names[i]) {
        s_.remove_prefix(names[i].size());
        return static_cast<unsigned>(i + 1);
      }
    }
    ok_ = false;
    return 0;
  }
  // asctime's date3 day: two digits, or SP and one digit.
  unsigned padded_day() {
    if (ok_ && !s_.empty() && s_.front() == ' ') {
      s_.remove_prefix(1);
      return digits(1);
    }
    return digits(2);
  }
  bool ok() const { return ok_; }
  bool at_end() const { return ok_ && s_.empty(); }

 private:
  std::string_view s_;
  bool ok_ = true;
};

struct Fields {
  std::int64_t year = 0;
  unsigned month = 0;
  unsigned day = 0;
  unsigned hour = 0;
  unsigned minute = 0;
  unsigned second = 0;
};

void time_of_day(Cursor& c, Fields& f) {
  f.hour = c.digits(2);
  c.literal(":");
  f.minute = c.digits(2);
  c.literal(":");
  f.second = c.digits(2);
}

unsigned days_in_month(std::int64_t year, unsigned month) {
  constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap_year(year) ? 29 : kDays[month - 1];
}

bool in_range(const Fields& f) {
  return f.month >= 1 && f.month <= 12 && f.day >= 1 && f.day <= days_in_month(f.year, f.month) &&
         f.hour <= 23 && f.minute <= 59 && f.second <= 60;
}

// RFC 9110 5.6.7: a two-digit year more than 50 years ahead of now is in the past century.
std::int64_t expand_two_digit_year(unsigned yy, Millis wall_now) {
  const auto now_days = static_cast<std::int64_t>(wall_now.count() / 1000 / 86400);
  const std::int64_t now_year = year_from_days(now_days);
  std::int64_t year = now_year - now_year % 100 + yy;
  if (year > now_year + 50) {
    year -= 100;
  } else if (year <= now_year - 50) {
    year += 100;
  }
  return year;
}

}  // namespace

std::optional<std::int64_t> parse_http_date(std::string_view text, Millis wall_now) {
  Cursor c(text);
  Fields f;
  if (text.size() > 3 && text[3] == ',') {
    // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
    c.one_of(kShortDays);
    c.literal(", ");
    f.day = c.digits(2);
    c.literal(" ");
    f.month = c.one_of(kMonths);
    c.literal(" ");
    f.year = c.digits(4);
    c.literal(" ");
    time_of_day(c, f);
    c.literal(" GMT");
  } else if (text.size() > 3 && text[3] == ' ') {
    // asctime: "Sun Nov  6 08:49:37 1994".
    c.one_of(kShortDays);
    c.literal(" ");
    f.month = c.one_of(kMonths);
    c.literal(" ");
    f.day = c.padded_day();
    c.literal(" ");
    time_of_day(c, f);
    c.literal(" ");
    f.year = c.digits(4);
  } else {
    // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT".
    c.one_of(kLongDays);
    c.literal(", ");
    f.day = c.digits(2);
    c.literal("-");
    f.month = c.one_of(kMonths);
    c.literal("-");
    const unsigned yy = c.digits(2);
    c.literal(" ");
    time_of_day(c, f);
    c.literal(" GMT");
    if (c.ok()) f.year = expand_two_digit_year(yy, wall_now);
  }
  if (!c.at_end() || !in_range(f)) return std::nullopt;
  return days_from_civil(f.year, f.month, f.day) * 86400 +
         static_cast<std::int64_t>(f.hour * 3600 + f.minute * 60 + f.second);
}

std::optional<Millis> parse_retry_after(std::string_view value, Millis wall_now) {
  if (value.empty()) return std::nullopt;
  if (value.front() >= '0' && value.front() <= '9') {
    std::uint64_t seconds = 0;
    constexpr std::uint64_t kMax = ~std::uint64_t{0};
    for (const char ch : value) {
      if (ch < '0' || ch > '9') return std::nullopt;
      const auto d = static_cast<std::uint64_t>(ch - '0');
      seconds = seconds > (kMax - d) / 10 ? kMax : seconds * 10 + d;
    }
    return Millis::seconds(seconds);
  }
  const std::optional<std::int64_t> date = parse_http_date(value, wall_now);
  if (!date) return std::nullopt;
  if (*date <= 0) return Millis(0);
  // Saturating: a two-digit RFC 850 year read against a clock near Millis::max() can name a
  // date past it, which a plain multiplication would wrap to a small value.
  return Millis::seconds(static_cast<std::uint64_t>(*date)) - wall_now;
}

std::optional<Millis> parse_retry_after(std::string_view value,
                                        std::optional<std::string_view> date, Millis wall_now) {
  if (date) {
    const std::optional<std::int64_t> sent = parse_http_date(*date, wall_now);
    if (sent && *sent > 0) {
      return parse_retry_after(value, Millis::seconds(static_cast<std::uint64_t>(*sent)));
    }
  }
  return parse_retry_after(value, wall_now);
}

}  // namespace stepback::https
