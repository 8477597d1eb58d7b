//! The Gomocup (Piskvork) brain protocol: the engine side (`madang brain`)
//! and a driver that runs any external Gomocup engine as a
//! [`engine::Player`].
