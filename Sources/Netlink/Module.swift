import CNetlink
