package dev.eddy.gateway.geoip;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * English country and continent names for databases that give only an ISO 3166-1 alpha-2 country code (DB-IP and
 * the other ip-location-db files), worded as MaxMind's GeoLite2 words them, so a flag that filters on
 * {@code $geoip_country_name} or {@code $geoip_continent_code} matches whichever database Eddy was given.
 * Names come from {@link Locale} where it agrees with GeoLite2, otherwise from {@link #GEOLITE2_NAMES}.
 */
final class Countries {
    /** Continent codes and names as GeoLite2 has them. */
    private static final Map<String, String> CONTINENT_NAMES = Map.of(
            "AF", "Africa", "AN", "Antarctica", "AS", "Asia", "EU", "Europe",
            "NA", "North America", "OC", "Oceania", "SA", "South America");

    /** The countries of each continent, as GeoLite2 assigns them (Türkiye in Asia; Russia and Cyprus in Europe). */
    private static final Map<String, String> CONTINENT_COUNTRIES = Map.of(
            "AF", "AO BF BI BJ BW CD CF CG CI CM CV DJ DZ EG EH ER ET GA GH GM GN GQ GW KE KM LR LS LY MA MG "
                    + "ML MR MU MW MZ NA NE NG RE RW SC SD SH SL SN SO SS ST SZ TD TG TN TZ UG YT ZA ZM ZW",
            "AN", "AQ BV GS HM TF",
            "AS", "AE AF AM AZ BD BH BN BT CC CN GE HK ID IL IN IO IQ IR JO JP KG KH KP KR KW KZ LA LB LK MM "
                    + "MN MO MV MY NP OM PH PK PS QA SA SG SY TH TJ TM TR TW UZ VN YE",
            "EU", "AD AL AT AX BA BE BG BY CH CY CZ DE DK EE ES FI FO FR GB GG GI GR HR HU IE IM IS IT JE LI "
                    + "LT LU LV MC MD ME MK MT NL NO PL PT RO RS RU SE SI SJ SK SM UA VA XK",
            "NA", "AG AI AW BB BL BM BQ BS BZ CA CR CU CW DM DO GD GL GP GT HN HT JM KN KY LC MF MQ MS MX NI "
                    + "PA PM PR SV SX TC TT US VC VG VI",
            "OC", "AS AU CK CX FJ FM GU KI MH MP NC NF NR NU NZ PF PG PN PW SB TK TL TO TV UM VU WF WS",
            "SA", "AR BO BR CL CO EC FK GF GY PE PY SR UY VE");

    /** Where GeoLite2's English name differs from the JDK's (CLDR) one, e.g. "Hong Kong SAR China". */
    private static final Map<String, String> GEOLITE2_NAMES = Map.ofEntries(
            Map.entry("AG", "Antigua and Barbuda"),
            Map.entry("BA", "Bosnia and Herzegovina"),
            Map.entry("BL", "Saint Barthélemy"),
            Map.entry("BQ", "Bonaire, Sint Eustatius and Saba"),
            Map.entry("CD", "Congo (DRC)"),
            Map.entry("CG", "Congo Republic"),
            Map.entry("CI", "Ivory Coast"),
            Map.entry("CV", "Cabo Verde"),
            Map.entry("FM", "Federated States of Micronesia"),
            Map.entry("GS", "South Georgia and the South Sandwich Islands"),
            Map.entry("HK", "Hong Kong"),
            Map.entry("HM", "Heard and McDonald Islands"),
            Map.entry("KN", "Saint Kitts and Nevis"),
            Map.entry("LC", "Saint Lucia"),
            Map.entry("MF", "Saint Martin"),
            Map.entry("MM", "Myanmar"),
            Map.entry("MO", "Macao"),
            Map.entry("PM", "Saint Pierre and Miquelon"),
            Map.entry("PS", "Palestine"),
            Map.entry("SJ", "Svalbard and Jan Mayen"),
            Map.entry("ST", "São Tomé and Príncipe"),
            Map.entry("TC", "Turks and Caicos Islands"),
            Map.entry("TR", "Türkiye"),
            Map.entry("TT", "Trinidad and Tobago"),
            Map.entry("UM", "United States Minor Outlying Islands"),
            Map.entry("VC", "Saint Vincent and the Grenadines"),
            Map.entry("WF", "Wallis and Futuna"));

    private static final Map<String, String> CONTINENT_OF = new HashMap<>();

    static {
        CONTINENT_COUNTRIES.forEach((continent, countries) -> {
            for (final String country : countries.split(" ")) {
                CONTINENT_OF.put(country, continent);
            }
        });
    }

    private Countries() {
    }

    /**
     * The English name of a two-letter country code ({@code "US"}: "United States"); empty for a code GeoLite2 does
     * not know (the JDK would answer "Unknown Region").
     */
    static Optional<String> name(final String countryCode) {
        final String code = countryCode.toUpperCase(Locale.ROOT);
        if (!CONTINENT_OF.containsKey(code)) {
            return Optional.empty();
        }
        final String override = GEOLITE2_NAMES.get(code);
        return Optional.of(override != null ? override : new Locale("", code).getDisplayCountry(Locale.ENGLISH));
    }

    /** The continent code of a two-letter country code ({@code "FR"}: {@code "EU"}). */
    static Optional<String> continentCode(final String countryCode) {
        return Optional.ofNullable(CONTINENT_OF.get(countryCode.toUpperCase(Locale.ROOT)));
    }

    /** The English name of a continent code ({@code "NA"}: "North America"). */
    static Optional<String> continentName(final String continentCode) {
        return Optional.ofNullable(CONTINENT_NAMES.get(continentCode.toUpperCase(Locale.ROOT)));
    }
}
