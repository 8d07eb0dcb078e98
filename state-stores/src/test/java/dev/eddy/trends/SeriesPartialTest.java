package dev.eddy.trends;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A block row's bucket, found from its microseconds by a guess from the buckets' average width, is the last bucket
 * starting at or before it (as a search of the starts finds), and the range's own ({@link DateRange#bucketOf}) in
 * zones whose clocks move by whole hours.
 */
class SeriesPartialTest {
    private static final List<ZoneId> ZONES = List.of(ZoneId.of("UTC"), ZoneId.of("Europe/Paris"), ZoneId.of("America/Los_Angeles"),
            ZoneId.of("Asia/Kolkata"), ZoneId.of("Australia/Lord_Howe"));

    @Test
    void everyMicrosecondFindsTheBucketTheRangeSaysAndItsSpanHoldsNoOther() {
        final Random random = new Random(18);
        final ZonedDateTime base = ZonedDateTime.parse("2025-01-01T00:00:00Z");
        for (int trial = 0; trial < 400; trial++) {
            final ZoneId zone = ZONES.get(random.nextInt(ZONES.size()));
            final Interval interval = Interval.values()[random.nextInt(Interval.values().length)];
            final long spanHours = switch (interval) {
                case HOUR -> 1 + random.nextInt(24 * 10);
                case DAY -> 24L * (1 + random.nextInt(120));
                case WEEK -> 24L * (7 + random.nextInt(300));
                case MONTH -> 24L * (28 + random.nextInt(900));
            };
            final ZonedDateTime from = base.plusMinutes(random.nextInt(60 * 24 * 400)).withZoneSameInstant(zone);
            final ZonedDateTime to = from.plusHours(spanHours).plusMinutes(random.nextInt(60));
            final DateRange range = new DateRange(from, to, interval, DayOfWeek.of(1 + random.nextInt(7)));
            final SeriesPartial partial = new SeriesPartial(TrendMath.TOTAL, range);
            final long first = micros(from.toInstant()) - 86_400_000_000L;
            final long span = micros(to.toInstant()) + 86_400_000_000L - first;
            for (int i = 0; i < 300; i++) {
                final long t = first + (long) (random.nextDouble() * span);
                assertThat(partial.bucketOfMicros(t)).as("%s %s %s..%s at %d", zone, interval, from, to, t).isEqualTo(searched(range, t));
                if (!zone.getId().equals("Australia/Lord_Howe")) {
                    assertThat(partial.bucketOfMicros(t)).isEqualTo(range.bucketOf(Instant.EPOCH.plus(t, ChronoUnit.MICROS)));
                }
                final int bucket = partial.bucketOfMicros(t);
                if (bucket >= 0) {
                    // The bucket's span, which a scan reuses for the rows after: exactly the microseconds of that bucket.
                    final long start = partial.bucketStartMicros(bucket);
                    final long end = partial.bucketEndMicros(bucket);
                    assertThat(start).isLessThanOrEqualTo(t);
                    assertThat(end).isGreaterThan(t);
                    assertThat(searched(range, start)).isEqualTo(bucket);
                    assertThat(searched(range, end - 1)).isEqualTo(bucket);
                    assertThat(searched(range, start - 1)).isNotEqualTo(bucket);
                    assertThat(searched(range, end)).isNotEqualTo(bucket);
                }
            }
            // The edges: each bucket's first microsecond and the one before it.
            for (final ZonedDateTime bucket : range.buckets()) {
                for (final long t : new long[] {micros(bucket.toInstant()), micros(bucket.toInstant()) - 1}) {
                    assertThat(partial.bucketOfMicros(t)).as("%s %s edge %s", zone, interval, bucket).isEqualTo(searched(range, t));
                }
            }
        }
    }

    /** The bucket by a binary search of the buckets' first microseconds; -1 outside the range. */
    private static int searched(final DateRange range, final long t) {
        final long[] starts = range.buckets().stream().mapToLong(b -> ceil(b.toInstant())).toArray();
        if (t < ceil(range.from().toInstant()) || t > micros(range.to().toInstant())) {
            return -1;
        }
        final int found = java.util.Arrays.binarySearch(starts, t);
        return found >= 0 ? found : -found - 2;
    }

    private static long ceil(final Instant instant) {
        return instant.getEpochSecond() * 1_000_000L + (instant.getNano() + 999) / 1000;
    }

    private static long micros(final Instant instant) {
        return instant.getEpochSecond() * 1_000_000L + instant.getNano() / 1000;
    }
}
