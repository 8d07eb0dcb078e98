package dev.eddy.flags;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import java.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every operator with PostHog's coercions: {@code operator | filter value (JSON) | property (JSON, or absent) | match}. */
class PropertyMatcherTest {
    private static final Instant NOW = Instant.parse("2026-11-22T12:00:00Z");

    @ParameterizedTest(name = "{0} {1} on {2} -> {3}")
    @CsvSource(delimiter = '|', nullValues = "absent", value = {
            // exact / is_not: case-insensitive text, lists are any-of, missing property
            "exact|\"Pro\"|\"pro\"|true",
            "exact|[\"free\",\"pro\"]|\"PRO\"|true",
            "exact|[\"free\",\"pro\"]|\"team\"|false",
            "exact|\"1\"|1|true",
            "exact|1|\"1\"|true",
            "exact|true|true|true",
            "exact|\"true\"|true|true",
            "exact|false|true|false",
            "exact|\"x\"|absent|false",
            "exact|\"x\"|null|false",
            "is_not|\"pro\"|\"Pro\"|false",
            "is_not|\"pro\"|\"free\"|true",
            "is_not|[\"a\",\"b\"]|\"c\"|true",
            "is_not|\"pro\"|absent|true",
            // set / not set
            "is_set|\"is_set\"|\"anything\"|true",
            "is_set|\"is_set\"|null|true",
            "is_set|\"is_set\"|absent|false",
            "is_not_set|\"is_not_set\"|absent|true",
            "is_not_set|\"is_not_set\"|\"x\"|false",
            // contains and friends
            "icontains|\"EXAMPLE.com\"|\"ada@example.COM\"|true",
            "icontains|\"posthog\"|\"ada@example.com\"|false",
            "not_icontains|\"posthog\"|\"ada@example.com\"|true",
            "not_icontains|\"example\"|\"ada@example.com\"|false",
            "icontains|\"2\"|123|true",
            "icontains_multi|[\"foo\",\"EXAMPLE\"]|\"a@example.com\"|true",
            "not_icontains_multi|[\"foo\",\"bar\"]|\"a@example.com\"|true",
            "starts_with|\"ADA\"|\"ada@x\"|true",
            "not_starts_with|\"ada\"|\"bob\"|true",
            "ends_with|\".COM\"|\"a@x.com\"|true",
            "not_ends_with|\".com\"|\"a@x.com\"|false",
            // regex: unanchored search, invalid pattern never matches
            "regex|\"^ada@.*\\\\.com$\"|\"ada@example.com\"|true",
            "regex|\"example\"|\"ada@example.com\"|true",
            "regex|\"^example\"|\"ada@example.com\"|false",
            "regex|\"(unclosed\"|\"(unclosed\"|false",
            "not_regex|\"(unclosed\"|\"x\"|false",
            "not_regex|\"^b\"|\"ada\"|true",
            "regex|\"\\\\d+\"|42|true",
            "regex|\"(a+)+$\"|\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\"|false",
            // numbers compare as numbers, text as text
            "gt|5|10|true",
            "gt|\"5\"|10|true",
            "gt|5|\"10\"|true",
            "gt|10|5|false",
            "gte|10|10|true",
            "lt|\"10\"|9.5|true",
            "lte|1|1.0|true",
            "gt|\"b\"|\"c\"|true",
            "lt|\"b\"|\"a\"|true",
            "gt|5|absent|false",
            "gt|5|[1]|false",
            // dates: absolute and relative, property as ISO text or epoch seconds
            "is_date_before|\"2026-01-01\"|\"2025-12-31T23:59:59Z\"|true",
            "is_date_before|\"2026-01-01\"|\"2026-01-02\"|false",
            "is_date_after|\"-7d\"|\"2026-11-20T00:00:00Z\"|true",
            "is_date_after|\"-7d\"|\"2026-11-01T00:00:00Z\"|false",
            "is_date_before|\"-1h\"|\"2026-11-22T10:00:00Z\"|true",
            "is_date_after|\"-2w\"|\"2026-11-10\"|true",
            "is_date_before|\"-1m\"|\"2026-10-21\"|true",
            "is_date_after|\"-1y\"|1764000000|true",
            "is_date_exact|\"2026-11-22T12:00:00Z\"|\"2026-11-22T12:00:00Z\"|true",
            "is_date_after|\"not a date\"|\"2026-11-20\"|false",
            "is_date_after|\"-7d\"|\"yesterday\"|false",
            // semver: v prefix, padding, pre-release ignored
            "semver_eq|\"1.2.3\"|\"v1.2.3\"|true",
            "semver_eq|\"1.2\"|\"1.2.0\"|true",
            "semver_neq|\"1.2.3\"|\"1.2.4\"|true",
            "semver_gt|\"1.2.3\"|\"1.10.0\"|true",
            "semver_gte|\"1.2.3\"|\"1.2.3-beta.1\"|true",
            "semver_lt|\"2.0.0\"|\"1.99.99\"|true",
            "semver_lte|\"2.0.0\"|\"2.0.1\"|false",
            "semver_tilde|\"1.2.3\"|\"1.2.9\"|true",
            "semver_tilde|\"1.2.3\"|\"1.3.0\"|false",
            "semver_caret|\"1.2.3\"|\"1.9.0\"|true",
            "semver_caret|\"1.2.3\"|\"2.0.0\"|false",
            "semver_caret|\"0.2.3\"|\"0.3.0\"|false",
            "semver_caret|\"0.0.3\"|\"0.0.3\"|true",
            "semver_wildcard|\"1.2.*\"|\"1.2.77\"|true",
            "semver_wildcard|\"1.*\"|\"2.0.0\"|false",
            "semver_gt|\"1.2.3\"|\"not-a-version\"|false",
            // an unknown operator never matches
            "flag_evaluates_to|true|true|false"})
    void operatorsCoerceAsPostHogDoes(final String operator, final String value, final String actual, final boolean expected)
            throws Exception {
        final JsonNode filter = Json.mapper().readTree(value);
        final JsonNode property = actual == null ? null : Json.mapper().readTree(actual);

        assertThat(PropertyMatcher.matches(operator, filter, property, NOW)).isEqualTo(expected);
    }
}
