package backend

// exeSuffix ends executable file names on this platform.
const exeSuffix = ".exe"
