package dev.eddy.funnels;

import dev.eddy.serde.Binary;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The bytes of a {@link FunnelQuery.Partial}, as instances send them to the one that merges.
 *
 * <p>Version 3, big-endian ({@link DataOutputStream}): {@code [version 3]}, then three sections, each a count and
 * its entries, the tally, and the actors a persons request lists:
 * <ul>
 *   <li>outcomes: {@code [value][count]([step reached: 2][timings count: 2][timing: 8]*)*};</li>
 *   <li>trend periods: {@code [value][periods: 4]([reached from: 8][converted: 8])*};</li>
 *   <li>groups: {@code [key][count]([time: 8][uuid][steps: 2 + 2 each][exclusions: 2 + 2 each][value])*};</li>
 *   <li>the actors summed up: {@code [0]} when none, else {@code [1]} and the {@link FunnelTally#write tally};</li>
 *   <li>actors listed: {@code [values: 4]([value][count: 4][id]*)*}.</li>
 * </ul>
 * A value is a 2-byte count of strings; a string a 4-byte length and UTF-8; a uuid a tag byte then 16 bytes (0) or
 * {@code DataOutputStream.writeUTF} text (1, for an id that is not a canonical uuid): {@link Binary#writeId}.
 */
final class PartialCodec {
    private static final byte VERSION = 3;

    private PartialCodec() {
    }

    static byte[] encode(final FunnelQuery.Partial partial) {
        return Binary.write(VERSION, out -> {
            out.writeInt(partial.outcomes.size());
            for (final Map.Entry<List<String>, List<FunnelOutcome>> e : partial.outcomes.entrySet()) {
                value(out, e.getKey());
                out.writeInt(e.getValue().size());
                for (final FunnelOutcome o : e.getValue()) {
                    out.writeShort(o.stepReached());
                    out.writeShort(o.timings().length);
                    for (final double t : o.timings()) {
                        out.writeDouble(t);
                    }
                }
            }
            out.writeInt(partial.periods.size());
            for (final Map.Entry<List<String>, long[]> e : partial.periods.entrySet()) {
                value(out, e.getKey());
                out.writeInt(e.getValue().length / 2);
                for (final long c : e.getValue()) {
                    out.writeLong(c);
                }
            }
            out.writeInt(partial.groups.size());
            for (final Map.Entry<String, List<FunnelEvent>> e : partial.groups.entrySet()) {
                string(out, e.getKey());
                out.writeInt(e.getValue().size());
                for (final FunnelEvent event : e.getValue()) {
                    event(out, event);
                }
            }
            out.writeBoolean(partial.tally != null);
            if (partial.tally != null) {
                partial.tally.write(out);
            }
            out.writeInt(partial.actors.size());
            for (final Map.Entry<List<String>, List<String>> e : partial.actors.entrySet()) {
                value(out, e.getKey());
                out.writeInt(e.getValue().size());
                for (final String id : e.getValue()) {
                    Binary.writeId(out, id);
                }
            }
        });
    }

    /**
     * @param steps   the query's number of steps (what events and outcomes may name)
     * @param periods the query's number of trend periods (0 unless a funnel trend)
     * @throws IllegalArgumentException on bytes that are not a version-3 partial of such a query
     */
    static FunnelQuery.Partial decode(final byte[] bytes, final int steps, final int periods) {
        return Binary.read(bytes, VERSION, "a funnel partial", in -> {
            final FunnelQuery.Partial partial = new FunnelQuery.Partial();
            final int values = count(in, 4);
            for (int v = 0; v < values; v++) {
                final List<String> value = value(in);
                final int count = count(in, 4);
                final List<FunnelOutcome> outcomes = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    final int step = in.readShort();
                    final int timings = in.readUnsignedShort();
                    if (step < 0 || step >= steps || timings > steps - 1) {
                        throw new IllegalArgumentException("funnel partial names a step the funnel does not have");
                    }
                    final double[] t = new double[timings];
                    for (int k = 0; k < timings; k++) {
                        t[k] = in.readDouble();
                    }
                    outcomes.add(FunnelOutcome.reached(step, t));
                }
                partial.outcomes.put(value, outcomes);
            }
            final int trendValues = count(in, 4);
            for (int v = 0; v < trendValues; v++) {
                final List<String> value = value(in);
                if (in.readInt() != periods) {
                    throw new IllegalArgumentException("funnel partial has other periods than the query");
                }
                final long[] counts = new long[2 * periods];
                for (int i = 0; i < counts.length; i++) {
                    counts[i] = in.readLong();
                }
                partial.periods.put(value, counts);
            }
            final int groups = count(in, 4);
            for (int g = 0; g < groups; g++) {
                final String key = string(in);
                final int count = count(in, 4);
                final List<FunnelEvent> events = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    events.add(event(in, steps));
                }
                partial.groups.put(key, events);
            }
            if (in.readBoolean()) {
                partial.tally = FunnelTally.read(in, steps);
            }
            final int listed = count(in, 4);
            for (int v = 0; v < listed; v++) {
                final List<String> value = value(in);
                final int count = count(in, 4);
                final List<String> ids = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    ids.add(Binary.readId(in));
                }
                partial.actors.put(value, ids);
            }
            return partial;
        });
    }

    /** A count that cannot be more than the bytes left could hold (so garbage never allocates much). */
    private static int count(final DataInputStream in, final int size) throws IOException {
        final int count = size == 2 ? in.readUnsignedShort() : in.readInt();
        if (count < 0 || count > in.available()) {
            throw new IllegalArgumentException("funnel partial has a count past its end");
        }
        return count;
    }

    private static void event(final DataOutputStream out, final FunnelEvent event) throws IOException {
        out.writeLong(event.timeMicros());
        Binary.writeId(out, event.uuid());
        out.writeShort(event.steps().length);
        for (final int s : event.steps()) {
            out.writeShort(s);
        }
        out.writeShort(event.exclusions().length);
        for (final int g : event.exclusions()) {
            out.writeShort(g);
        }
        value(out, event.breakdown());
    }

    private static FunnelEvent event(final DataInputStream in, final int steps) throws IOException {
        final long time = in.readLong();
        final String uuid = Binary.readId(in);
        final int[] matched = new int[count(in, 2)];
        for (int i = 0; i < matched.length; i++) {
            matched[i] = in.readShort();
            if (matched[i] < 0 || matched[i] >= steps) {
                throw new IllegalArgumentException("funnel partial names a step the funnel does not have");
            }
        }
        final int[] gaps = new int[count(in, 2)];
        for (int i = 0; i < gaps.length; i++) {
            gaps[i] = in.readShort();
            if (gaps[i] < 0 || gaps[i] >= steps - 1) {
                throw new IllegalArgumentException("funnel partial names an exclusion the funnel does not have");
            }
        }
        return new FunnelEvent(time, uuid, matched, gaps, value(in));
    }


    private static void value(final DataOutputStream out, final List<String> value) throws IOException {
        out.writeShort(value.size());
        for (final String s : value) {
            string(out, s);
        }
    }

    private static List<String> value(final DataInputStream in) throws IOException {
        final int size = count(in, 2);
        final List<String> value = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            value.add(string(in));
        }
        return List.copyOf(value);
    }

    private static void string(final DataOutputStream out, final String s) throws IOException {
        final byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(utf8.length);
        out.write(utf8);
    }

    private static String string(final DataInputStream in) throws IOException {
        final byte[] utf8 = new byte[count(in, 4)];
        in.readFully(utf8);
        return new String(utf8, StandardCharsets.UTF_8);
    }
}
