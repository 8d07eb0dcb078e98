package dev.eddy.funnels;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class KeptPersonsTest {
    @Test
    void personsAddedAndDroppedAtRandomAreFoundByTheirUuidsAsAMapWouldFindThem() {
        // Against a HashMap: adds, drops (the table's backward shift must keep every other person findable) and
        // numbers given again, through several growths of the table.
        final Random random = new Random(11);
        final KeptPersons persons = new KeptPersons();
        final Map<UUID, Integer> reference = new HashMap<>();
        final List<UUID> known = new ArrayList<>();
        for (int step = 0; step < 200_000; step++) {
            if (random.nextInt(3) > 0 || known.isEmpty()) {
                // Uuids with few distinct high halves collide often in the table's first slots.
                final UUID person = new UUID(random.nextInt(4), random.nextLong());
                final int number = persons.add(person);
                assertThat(persons.add(person)).as("added again").isEqualTo(number);
                reference.put(person, number);
                known.add(person);
                persons.append(number, new int[] {step});
            } else {
                final UUID person = known.remove(random.nextInt(known.size()));
                persons.drop(reference.remove(person));
                assertThat(persons.numberOf(person)).isEqualTo(-1);
            }
        }
        assertThat(persons.size()).isEqualTo(reference.size());
        assertThat(persons.live().cardinality()).isEqualTo(reference.size());
        final int[] seen = new int[known.size()];
        int i = 0;
        for (final UUID person : known) {
            final int number = persons.numberOf(person);
            assertThat(number).as("%s", person).isEqualTo(reference.get(person));
            assertThat(persons.uuid(number)).isEqualTo(person);
            assertThat(persons.rowCount(number)).isEqualTo(1);
            seen[i++] = number;
        }
        // Numbers given again: no more numbers than persons ever kept at once.
        assertThat(java.util.Arrays.stream(seen).max().orElseThrow()).isLessThan(200_000 * 2 / 3);
        assertThat(java.util.Arrays.stream(seen).distinct().count()).isEqualTo(known.size());
    }

    @Test
    void rowsAreAppendedAndRemovedInPlaceAndTheWeightFollowsThem() {
        final KeptPersons persons = new KeptPersons();
        final int number = persons.add(UUID.randomUUID());
        final long empty = persons.memoryBytes();
        for (int i = 0; i < 40; i++) {
            persons.append(number, new int[] {i, 100 + i});
        }
        persons.reweigh(number);
        assertThat(persons.rowCount(number)).isEqualTo(80);
        assertThat(persons.memoryBytes() - empty).isGreaterThanOrEqualTo(4L * 80);
        assertThat(persons.removeRowsIf(number, e -> e >= 100)).isTrue();
        assertThat(persons.removeRowsIf(number, e -> e >= 100)).isFalse();
        assertThat(persons.rowCount(number)).isEqualTo(40);
        assertThat(persons.row(number, 39)).isEqualTo(39);
        persons.evaluate(number, new long[] {1, 2, 3}, FunnelOutcome.reached(2, new double[] {1.5, 2.5}), null);
        assertThat(persons.evaluated(number)).isTrue();
        persons.drop(number);
        assertThat(persons.memoryBytes()).as("as if never kept").isEqualTo(new KeptPersons().memoryBytes());
        assertThat(persons.size()).isZero();
    }

    @Test
    void packedNumbersComeBackAscendingWithoutRepeats() {
        final Random random = new Random(3);
        for (int round = 0; round < 500; round++) {
            final int[] numbers = random.ints(random.nextInt(0, 300), 0, round % 2 == 0 ? 1_000 : Integer.MAX_VALUE).toArray();
            final int[] expected = java.util.Arrays.stream(numbers).distinct().sorted().toArray();
            final byte[] packed = PersonNumbers.pack(numbers);
            assertThat(PersonNumbers.unpack(packed)).containsExactly(expected);
            final int[] more = random.ints(random.nextInt(0, 50), 0, 2_000).toArray();
            assertThat(PersonNumbers.unpack(PersonNumbers.union(packed, PersonNumbers.pack(more))))
                    .containsExactly(java.util.stream.IntStream.concat(java.util.Arrays.stream(numbers), java.util.Arrays.stream(more)).distinct().sorted().toArray());
        }
        // Close numbers take a byte each.
        assertThat(PersonNumbers.pack(java.util.stream.IntStream.range(0, 1_000).map(i -> 3 * i).toArray())).hasSize(1_000);
    }
}
