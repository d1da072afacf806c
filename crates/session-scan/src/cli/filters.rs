//! The options that pick sessions and days, shared by `usage`, `grep` and `tools`.

use session_scan::days::DayRange;

/// `--project`, `--since` and `--until`.
#[derive(clap::Args)]
pub struct SessionFilter {
    /// Only sessions whose project (the header's cwd) contains this text.
    ///
    /// What a session of another project did first (a copy in a fork or clone) is counted there,
    /// not here.
    #[arg(long, value_name = "TEXT")]
    pub project: Option<String>,
    /// First day, inclusive.
    ///
    /// First day, inclusive (YYYY-MM-DD, YYYYMMDD or an ISO date-time), in the zone of --timezone.
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Last day, inclusive.
    ///
    /// Last day, inclusive (YYYY-MM-DD, YYYYMMDD or an ISO date-time), in the zone of --timezone.
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
}

impl SessionFilter {
    /// The days asked for, in the zone of the command line.
    pub fn days(&self, g: &super::Globals) -> anyhow::Result<DayRange> {
        DayRange::parse(self.since.as_deref(), self.until.as_deref(), &g.zone.tz).map_err(anyhow::Error::msg)
    }
}
