package dev.eddy.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * CPU time used by processes of this machine, from {@code /proc} (Linux): snapshots of named groups of processes
 * and of the whole machine, and what each group used between two snapshots.
 */
final class ProcessCpu {
    /** Linux's USER_HZ, the unit of the CPU times in {@code /proc}: 100 on every architecture Linux runs on today. */
    private static final double TICKS_PER_SECOND = 100;
    /** The machine as a whole, in {@link Snapshot#groups}. */
    static final String MACHINE = "machine";

    /**
     * Processes measured together under one name.
     *
     * @param pids the group's processes at the moment of a snapshot
     */
    record Group(String name, Supplier<List<Long>> pids) {
        static Group of(final String name, final long pid) {
            return new Group(name, () -> List.of(pid));
        }

        /** PostgreSQL's backends serving {@code database}, recognized by the process title PostgreSQL gives them. */
        static Group postgres(final String name, final String database) {
            return new Group(name, () -> postgresBackends(database));
        }
    }

    /**
     * CPU seconds used so far by each process of each group, and by the whole machine (group {@link #MACHINE}, pid
     * 0), at {@code nanos} ({@link System#nanoTime}).
     */
    record Snapshot(Map<String, Map<Long, Double>> groups, long nanos) {
    }

    private final List<Group> groups;

    ProcessCpu(final List<Group> groups) {
        this.groups = List.copyOf(groups);
    }

    Snapshot take() {
        final Map<String, Map<Long, Double>> seconds = new LinkedHashMap<>();
        for (final Group g : groups) {
            final Map<Long, Double> byPid = new HashMap<>();
            for (final long pid : g.pids().get()) {
                final double s = processSeconds(pid);
                if (!Double.isNaN(s)) {
                    byPid.put(pid, s);
                }
            }
            seconds.put(g.name(), byPid);
        }
        seconds.put(MACHINE, Map.of(0L, machineBusySeconds()));
        return new Snapshot(seconds, System.nanoTime());
    }

    /**
     * CPU seconds each group (and the machine) used from {@code from} to {@code to}: per process present at {@code
     * to}, its time then less its time at {@code from} (all of it if it started in between). A process that ended in
     * between is not counted.
     */
    static Map<String, Double> used(final Snapshot from, final Snapshot to) {
        final Map<String, Double> used = new LinkedHashMap<>();
        to.groups().forEach((name, byPid) -> {
            final Map<Long, Double> before = from.groups().getOrDefault(name, Map.of());
            used.put(name, byPid.entrySet().stream().mapToDouble(e -> e.getValue() - before.getOrDefault(e.getKey(), 0.0)).sum());
        });
        return used;
    }

    /** This process and, if one runs on this machine, the local Kafka broker: what a benchmark of a Streams app measures. */
    static ProcessCpu appAndBroker() {
        final List<Group> groups = new ArrayList<>(List.of(Group.of("app", ProcessHandle.current().pid())));
        localBroker().ifPresent(pid -> groups.add(Group.of("broker", pid)));
        return new ProcessCpu(groups);
    }

    /** The local Kafka broker's process, if one runs on this machine. */
    static java.util.OptionalLong localBroker() {
        // From /proc: ProcessHandle.Info gives no command line for the broker's (its classpath is too long).
        return ProcessHandle.allProcesses().mapToLong(ProcessHandle::pid).filter(pid -> {
            try {
                return new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")), StandardCharsets.UTF_8)
                        .contains("\0kafka.Kafka\0");
            } catch (final IOException gone) {
                return false;
            }
        }).findFirst();
    }

    /**
     * CPU microseconds per event each group and the whole machine used between two snapshots, and the rate the
     * machine's cores would sustain at the machine's cost per event.
     */
    static String perEvent(final Snapshot from, final Snapshot to, final long events) {
        final Map<String, Double> used = used(from, to);
        final StringBuilder line = new StringBuilder("CPU per event:");
        used.forEach((name, seconds) -> line.append(String.format(java.util.Locale.ROOT, " %s %.1f µs,", name, seconds * 1e6 / events)));
        final int cores = Runtime.getRuntime().availableProcessors();
        line.append(String.format(java.util.Locale.ROOT, " so %d cores fully busy at this cost: %,.0f events/s", cores,
                cores * events / used.get(MACHINE)));
        return line.toString();
    }

    /** Of what {@link #used} returns: the machine's CPU seconds that none of the groups used (other work on its cores). */
    static double others(final Map<String, Double> used) {
        final double measured = used.entrySet().stream().filter(e -> !MACHINE.equals(e.getKey())).mapToDouble(Map.Entry::getValue).sum();
        return used.get(MACHINE) - measured;
    }

    /** utime + stime of the process, seconds; NaN when it is gone. */
    static double processSeconds(final long pid) {
        try {
            return statSeconds(Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.ISO_8859_1));
        } catch (final IOException e) {
            return Double.NaN;
        }
    }

    /**
     * utime + stime from a {@code /proc/<pid>/stat} line, seconds. The command name in parentheses may itself hold
     * spaces and parentheses, so the fields are counted from the last {@code ')'}: state is then the first, utime
     * the 12th and stime the 13th (fields 14 and 15 of proc(5)).
     */
    static double statSeconds(final String stat) {
        final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / TICKS_PER_SECOND;
    }

    /** CPU seconds all cores spent on anything but idling and waiting for I/O, from {@code /proc/stat}. */
    static double machineBusySeconds() {
        try {
            return busySeconds(Files.readAllLines(Path.of("/proc/stat")).get(0));
        } catch (final IOException e) {
            return Double.NaN;
        }
    }

    /** From the {@code cpu} line of {@code /proc/stat}: user, nice, system, irq, softirq and steal (guest is in user). */
    static double busySeconds(final String cpuLine) {
        final String[] f = cpuLine.trim().split("\\s+");
        long busy = 0;
        for (final int i : new int[] {1, 2, 3, 6, 7, 8}) {
            busy += Long.parseLong(f[i]);
        }
        return busy / TICKS_PER_SECOND;
    }

    /**
     * The pids of PostgreSQL backends serving {@code database}: PostgreSQL titles each {@code postgres: [cluster:] user
     * database host(port) state}.
     */
    static List<Long> postgresBackends(final String database) {
        final List<Long> pids = new ArrayList<>();
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
            for (final Path proc : procs) {
                try {
                    if (isBackendOf(new String(Files.readAllBytes(proc.resolve("cmdline")), StandardCharsets.UTF_8), database)) {
                        pids.add(Long.parseLong(proc.getFileName().toString()));
                    }
                } catch (final IOException gone) {
                    // The process ended while the directory was read.
                }
            }
        } catch (final IOException e) {
            throw new IllegalStateException("cannot list /proc", e);
        }
        return pids;
    }

    static boolean isBackendOf(final String title, final String database) {
        return title.startsWith("postgres: ") && (" " + title.replace('\0', ' ') + " ").contains(" " + database + " ");
    }
}
