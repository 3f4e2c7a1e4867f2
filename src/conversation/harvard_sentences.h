// Harvard sentences (IEEE 1969 "Recommended Practice for Speech Quality Measurements", lists 1
// and 2): phonetically balanced sentences, the usual material for intelligibility figures. Used
// by the intelligibility test and benchmark with the offline recogniser.
#pragma once
#include <array>

namespace imago::conversation::testdata {

inline constexpr std::array<const char*, 20> kHarvardSentences = {
    "The birch canoe slid on the smooth planks.",
    "Glue the sheet to the dark blue background.",
    "It's easy to tell the depth of a well.",
    "These days a chicken leg is a rare dish.",
    "Rice is often served in round bowls.",
    "The juice of lemons makes fine punch.",
    "The box was thrown beside the parked truck.",
    "The hogs were fed chopped corn and garbage.",
    "Four hours of steady work faced us.",
    "Large size in stockings is hard to sell.",
    "The boy was there when the sun rose.",
    "A rod is used to catch pink salmon.",
    "The source of the huge river is the clear spring.",
    "Kick the ball straight and follow through.",
    "Help the woman get back to her feet.",
    "A pot of tea helps to pass the evening.",
    "Smoky fires lack flame and heat.",
    "The soft cushion broke the man's fall.",
    "The salt breeze came across from the sea.",
    "The girl at the booth sold fifty bonds.",
};

}  // namespace imago::conversation::testdata
